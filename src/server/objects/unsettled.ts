/** The error of a confirmation that met an object still being written. */

/**
 * An object whose bytes do not add up yet (its body longer or shorter than its stated length, changed between
 * its HEAD and its GET, gone between them): an upload still under way, not a verdict on it. Its confirmation is
 * tried again later, quietly.
 */
export class ObjectUnsettled extends Error {
  override readonly name = 'ObjectUnsettled';
}
