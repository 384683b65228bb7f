/** The line `status` and `coverage` print when the data root is not there yet: their counts are a first look. */
export function rootMissingNotice(dataDir: string): string {
  return `The data root ${dataDir} does not exist yet: nothing is held there.\n`;
}
