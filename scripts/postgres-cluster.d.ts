/** A running throwaway PostgreSQL cluster (see postgres-cluster.js). */
export interface PostgresCluster {
  /** postgres://USER:PASSWORD@127.0.0.1:PORT/DATABASE */
  url: string;
  port: number;
  /** PID of the postmaster. */
  pid: number;
  /** Ends the cluster (fast shutdown, SIGKILL after 10 s) and removes its folder. */
  stop(): Promise<void>;
}

/** Starts a cluster on 127.0.0.1; as root it runs as the system user `postgres`. */
export function startPostgresCluster(options: {
  port?: number;
  user: string;
  password: string;
  database: string;
  /** fsync, synchronous commit and full-page writes off (default true: for tests). */
  tuned?: boolean;
}): Promise<PostgresCluster>;

/** A random password for a throwaway cluster. */
export function randomPassword(): string;
