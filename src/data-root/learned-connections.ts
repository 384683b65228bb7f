/**
 * What `--connections auto` measured, per host, kept for the next run: a large download starts from the number
 * the last run to that host settled on rather than from the fixed default, so a link that rewards 32 connections
 * is not ramped up to them again every time (on a 3 s download the ramp is a fifth of it). Kept in
 * `<data root>/.mission-data/connections.json`, beside the other state; a number older than `FORGET_AFTER_MS`
 * is forgotten, since links change. Best effort: a record that cannot be read is ignored, one that cannot be
 * written is not kept, and neither fails a download.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { replaceFileSync } from '../core/replace-file.js';
import { STATE_NAMES, stateFolder } from './state-folder.js';

/** The file under the state folder. */
export const CONNECTIONS_FILE = STATE_NAMES.learnedConnections;

/** How long a measured number is trusted. */
export const FORGET_AFTER_MS = 30 * 24 * 3_600_000;

/** The numbers a download may start from: a kept number above `max` is not trusted; `start` where none is kept. */
export interface ConnectionLimits {
  start: number;
  max: number;
}

/** What is kept of one host. */
interface Learned {
  connections: number;
  measuredAtMs: number;
}

/** The file's form. */
interface LearnedFile {
  version: 1;
  hosts: Record<string, { connections: number; measuredAt: string }>;
}

/** The numbers of a data root's record, read once per batch and written back once when a download learned one. */
export class LearnedConnections {
  readonly #hosts = new Map<string, Learned>();
  #changed = false;

  private constructor(
    /** The record's path; undefined when the data root has no state folder to keep it in. */
    readonly path: string | undefined,
    readonly limits: ConnectionLimits,
  ) {}

  /** The record of the data root whose real path is `root` (its state folder made by the batch already). */
  static read(root: string, limits: ConnectionLimits, nowMs = Date.now()): LearnedConnections {
    const learned = new LearnedConnections(join(stateFolder(root), CONNECTIONS_FILE), limits);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(learned.path as string, 'utf8'));
    } catch {
      return learned;
    }
    const hosts = (parsed as Partial<LearnedFile> | null)?.hosts;
    if (typeof hosts !== 'object' || hosts === null) return learned;
    for (const [host, entry] of Object.entries(hosts)) {
      const connections = entry?.connections;
      const measuredAtMs = Date.parse(String(entry?.measuredAt));
      if (
        Number.isSafeInteger(connections) &&
        connections >= 1 &&
        connections <= limits.max &&
        Number.isFinite(measuredAtMs) &&
        nowMs - measuredAtMs < FORGET_AFTER_MS &&
        measuredAtMs <= nowMs + 60_000
      ) {
        learned.#hosts.set(host, { connections, measuredAtMs });
      }
    }
    return learned;
  }

  /** The number a download from `host` starts with: the one last measured there, or the fixed default. */
  startFor(host: string): number {
    return this.measuredAt(host) ?? this.limits.start;
  }

  /** The number last measured for `host`; undefined when none was. */
  measuredAt(host: string): number | undefined {
    return this.#hosts.get(host)?.connections;
  }

  /** Keeps `connections` as what a download from `host` settled on (written by `save`). */
  learn(host: string, connections: number, nowMs = Date.now()): void {
    const before = this.#hosts.get(host);
    this.#hosts.set(host, { connections, measuredAtMs: nowMs });
    if (before?.connections !== connections || nowMs - before.measuredAtMs > 3_600_000) this.#changed = true;
  }

  /** Writes the record when a number was learned: whole, to a file of its own, then renamed over the old one. */
  save(): void {
    if (!this.#changed || this.path === undefined) return;
    const content: LearnedFile = { version: 1, hosts: {} };
    for (const [host, { connections, measuredAtMs }] of this.#hosts) {
      content.hosts[host] = { connections, measuredAt: new Date(measuredAtMs).toISOString() };
    }
    const temporary = `${this.path}.${process.pid}.tmp`;
    try {
      writeFileSync(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o644, flag: 'wx' });
      replaceFileSync(temporary, this.path);
      this.#changed = false;
    } catch {
      // Not kept: the next run measures again.
      rmSync(temporary, { force: true });
    }
  }
}
