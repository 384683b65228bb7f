/** The forms a coverage report is printed in: a calendar for a terminal, a web page, JSON and CSV records. */
export { formatCalendarHtml } from './calendar-html.js';
export { formatCoverageCsv, formatCoverageJson } from './calendar-records.js';
export { formatCalendar } from './calendar-text.js';
