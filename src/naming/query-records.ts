/**
 * The records a query answers with, as the service sends them: `GET /query`'s file records (both generations'
 * fields) and `GET /spice-query`'s kernel records. The client checks them (service/records.ts) and the reference
 * server writes them (naming/grammars.ts gives each kind's fields).
 */

/** One record of `GET /query`, as the service sends it (unknown extra fields are kept). */
export interface QueryRecord {
  file_path: string;
  instrument: string;
  /** Absent in ancillary records. */
  data_level?: string | undefined;
  descriptor: string;
  start_date: string;
  /**
   * Present in the specification's science records and every ancillary record (null for one date); absent in
   * today's science records.
   */
  end_date?: string | null | undefined;
  version: string;
  extension: string;
  /** `YYYY-MM-DD HH:MM:SS` (UTC). */
  ingestion_date?: string | undefined;
  /** Today's science records: the repointing number, null when the name has none. */
  repointing?: number | null | undefined;
  /** Today's science records: the Carrington rotation, null when the name has none. */
  cr?: number | null | undefined;
  /** Today's science records: the major version, null for a minor-only `vNNN`. */
  major_version?: number | null | undefined;
  /** Today's science records: the minor version. */
  minor_version?: number | null | undefined;
}

/**
 * One record of `GET /spice-query`: a SPICE kernel (unknown extra fields are kept). The client always hands it
 * out with its `file_path`: a service that leaves it out (today's lists the name alone) has it rebuilt from
 * `file_name`, as the kernel's storage path follows from its name.
 */
export interface SpiceRecord {
  /** The kernel's storage path, `imap/spice/<folder>/<name>`. */
  file_path: string;
  file_name: string;
  kernel_type: string;
  /** ISO 8601; null when the kernel's name carries no date. */
  min_date_datetime: string | null;
  max_date_datetime: string | null;
  ingestion_date?: string | undefined;
  /** The kernel's version as the service states it (its digits, as text or as a number). */
  version: string | number;
}
