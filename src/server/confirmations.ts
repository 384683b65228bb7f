/**
 * Confirmation of uploads that went straight to the store. The client sends its bytes to a pre-signed URL
 * and tells the server nothing after, so the server finds them itself: a loop over the pending reservations
 * (every server of the service runs one; the index lets one confirmation win), and a pass before an answer that
 * must see them (`/query`, `/download`, a new reservation of the name). Each object is confirmed (present,
 * its size and checksums taken and checked) before its record becomes visible; a reservation whose object
 * has not arrived by its release time is released.
 */
import type { MetadataIndex, Reservation } from './metadata/metadata-index.js';
import { type ConfirmsUploads, type ObjectStore, PutRejected } from './objects/object-store.js';

/** How often the loop looks at pending reservations, by default. */
export const CONFIRM_INTERVAL_MS = 2_000;

/** What a pass did. */
export interface ConfirmPass {
  confirmed: number;
  released: number;
}

/** Confirms or releases the pending reservations of one store and index. */
export class UploadConfirmer {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<ConfirmPass> | undefined;
  /** The pass that follows the one under way, shared by every caller that came during it. */
  #next: Promise<ConfirmPass> | undefined;

  constructor(
    readonly store: ObjectStore & ConfirmsUploads,
    readonly index: MetadataIndex,
    /** Called with an error a pass met (the loop goes on). */
    readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Starts the loop. */
  start(intervalMs = CONFIRM_INTERVAL_MS): void {
    this.#timer = setInterval(() => {
      this.settle().catch(this.onError);
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops the loop and waits for a pass under way. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  /**
   * One pass over every pending reservation (a pass already under way is followed by one more, so what was
   * uploaded before this call is seen). Resolves when done.
   */
  async settle(): Promise<ConfirmPass> {
    if (this.#next) return this.#next;
    const running = this.#running;
    if (!running) return this.#begin();
    this.#next = running
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.#begin();
      });
    return this.#next;
  }

  #begin(): Promise<ConfirmPass> {
    const pass = this.#pass().finally(() => {
      if (this.#running === pass) this.#running = undefined;
    });
    this.#running = pass;
    return pass;
  }

  async #pass(): Promise<ConfirmPass> {
    const done: ConfirmPass = { confirmed: 0, released: 0 };
    for (const reservation of await this.index.pending()) {
      const outcome = await this.confirmOne(reservation).catch((error: unknown) => {
        this.onError(error);
        return 'waiting' as const;
      });
      if (outcome === 'confirmed') done.confirmed += 1;
      if (outcome === 'released') done.released += 1;
    }
    return done;
  }

  /** Confirms one reservation's object if it arrived, releases the reservation if it is too late or refused. */
  async confirmOne(
    reservation: Reservation,
    now = Date.now(),
  ): Promise<'confirmed' | 'released' | 'waiting'> {
    let object: Awaited<ReturnType<ConfirmsUploads['confirm']>>;
    try {
      object = await this.store.confirm(reservation.key, { md5: reservation.md5 });
    } catch (error) {
      if (!(error instanceof PutRejected)) throw error;
      // Bytes that are not what was signed are removed, and the name is free again.
      await this.store.delete(reservation.key);
      await this.index.release(reservation);
      this.onError(error);
      return 'released';
    }
    if (object) return (await this.index.confirm(reservation, object)) ? 'confirmed' : 'waiting';
    if (reservation.releaseAtMs > now) return 'waiting';
    await this.index.release(reservation);
    return 'released';
  }
}
