/** What `query` and `download` say on stderr of a service's answer they cannot fully vouch for. */

/** The warning under an answer holding records whose names this version cannot check. */
export function newerFormsWarning(count: number): string {
  const records = count === 1 ? '1 record uses' : `${count} records use`;
  return `Warning: ${records} a naming form this version does not check; shown as received, and downloadable by their file_path.\n`;
}

/** The warning under an answer a service that cannot page may have cut. */
export function possiblyCutWarning(returned: number): string {
  return `Warning: the service returned ${returned} records and cannot be asked for more pages; the result may be cut at ${returned}. Narrow the filters (a shorter date range, one level) to be sure of seeing every match.\n`;
}
