/**
 * Confirmation of uploads that went straight to the store. The client sends its bytes to a pre-signed URL
 * and tells the server nothing after, so the server finds them itself: a loop over the pending reservations
 * (every server of the service runs one), and, before an answer that must see them, a confirmation of just the
 * pending uploads that answer could show (`/query`: those its filters select; `/download` and a new reservation:
 * that name), bounded in time. Each object is confirmed (present, its size and checksums taken and checked)
 * before its record becomes visible; a reservation whose object has not arrived by its release time is released.
 *
 * The work is shared, never repeated: a confirmation first claims its reservation in the index (a lease that
 * lapses if its server dies), so of every server and every caller exactly one works on an object at a time;
 * the others wait for its outcome (callers of one server share the one promise).
 */
import { runPool } from '../core/batch.js';
import { CLAIM_LEASE_MS, type MetadataIndex, type Reservation } from './metadata/metadata-index.js';
import { type ConfirmsUploads, type ObjectStore, PutRejected } from './objects/object-store.js';
import { ObjectUnsettled } from './objects/unsettled.js';

/** How often the loop looks at pending reservations, by default. */
export const CONFIRM_INTERVAL_MS = 2_000;

/** Confirmations a pass of the loop runs at once. */
export const CONFIRM_CONCURRENCY = 8;

/**
 * Looks an answer takes at once at the pending uploads it could show. Each is one HEAD (an upload signed with its
 * MD5): taken eight at a time, forty pending uploads cost five round trips of a busy store before the answer.
 */
export const ANSWER_LOOK_CONCURRENCY = 64;

/** The longest an answer waits for the pending uploads it could show: past it, it shows what is confirmed. */
export const ANSWER_WAIT_MS = 2_000;

/** How often a caller looks again at an upload another server (or caller) is confirming. */
const POLL_MS = 50;

/** What a pass did. */
export interface ConfirmPass {
  confirmed: number;
  released: number;
}

/**
 * What one confirmation attempt came to: `absent` when the object has not arrived (the index is as it was),
 * `waiting` when it could not be told or someone else changed the reservation, `busy` when someone else holds
 * the claim.
 */
type Outcome = 'confirmed' | 'released' | 'absent' | 'waiting' | 'busy';

/** What identifies one attempt: the reservation's name and token. */
const attemptId = (reservation: Reservation) => `${reservation.key}\n${reservation.token}`;

const sleep = (ms: number) => new Promise<void>((resolvePromise) => setTimeout(resolvePromise, ms).unref());

/** Confirms or releases the pending reservations of one store and index. */
export class UploadConfirmer {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<ConfirmPass> | undefined;
  /** The pass that follows the one under way, shared by every caller that came during it. */
  #next: Promise<ConfirmPass> | undefined;
  /** The newest attempt under way in this process, by name and token, and when it began: callers share it. */
  readonly #attempts = new Map<string, { outcome: Promise<Outcome>; began: number }>();
  /** Every attempt under way, those a newer one took the place of included: `stop` waits for them all. */
  readonly #inFlight = new Set<Promise<Outcome>>();
  #stopped = false;

  constructor(
    readonly store: ObjectStore & ConfirmsUploads,
    readonly index: MetadataIndex,
    /** Called with an error a pass met (the loop goes on). */
    readonly onError: (error: unknown) => void = () => undefined,
    /** How long a claim lasts unless ended. */
    readonly leaseMs = CLAIM_LEASE_MS,
  ) {}

  /** Starts the loop. */
  start(intervalMs = CONFIRM_INTERVAL_MS): void {
    this.#timer = setInterval(() => {
      if (!this.#running) this.settle().catch(this.onError);
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops the loop and waits for a pass and the confirmations under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
    await Promise.all(this.#inFlight);
  }

  /**
   * One pass over every pending reservation (a pass already under way is followed by one more, so what was
   * uploaded before this call is seen). Resolves when done. Answers never wait for it: see `awaitReservations`.
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

  /**
   * Waits until the pending uploads of `reservations` (those a query's look at the index found) are confirmed
   * or found not arrived, at most `waitMs` from `asked`. False when every one was found not arrived: the index
   * then says what it said at that look, and an answer taken from it stands; true when it may have changed.
   */
  awaitReservations(
    reservations: readonly Reservation[],
    asked = Date.now(),
    waitMs = ANSWER_WAIT_MS,
  ): Promise<boolean> {
    return this.#awaitAll(reservations, asked + waitMs, asked);
  }

  /** True unless every reservation was found not arrived in time (see `awaitReservations`). */
  async #awaitAll(reservations: readonly Reservation[], deadline: number, asked: number): Promise<boolean> {
    if (reservations.length === 0) return false;
    let changed = false;
    const work = runPool(reservations.length, ANSWER_LOOK_CONCURRENCY, async (at) => {
      if ((await this.#awaitOne(reservations[at] as Reservation, deadline, asked)) !== 'absent')
        changed = true;
    }).then(() => changed);
    let timer: NodeJS.Timeout | undefined;
    // Past the deadline the answer shows what is confirmed by then: the index may have changed.
    const late = new Promise<boolean>((resolvePromise) => {
      timer = setTimeout(() => resolvePromise(true), Math.max(0, deadline - Date.now()));
    });
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }

  /**
   * Confirms one reservation, or waits while someone else does, until `deadline`. Only a look taken since the
   * answer was asked for (`asked`) can tell: an attempt under way that began before may have looked before the
   * bytes arrived, so a new one starts at once beside it rather than after it (and later callers share the new
   * one). An upload whose PUT completed before the request is always seen, after one look's time.
   */
  async #awaitOne(reservation: Reservation, deadline: number, asked: number): Promise<Outcome> {
    for (;;) {
      const outcome = await this.#attemptSince(reservation, asked);
      if (outcome !== 'busy' || Date.now() >= deadline || this.#stopped) return outcome;
      await sleep(POLL_MS);
      const now = await this.index.reservation(reservation.key);
      if (now?.token !== reservation.token) return 'waiting';
    }
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
    const pending = await this.index.pending();
    // Servers start at different places of the list, so they seldom reach for the same object at once.
    const start = Math.floor(Math.random() * pending.length);
    const order = [...pending.slice(start), ...pending.slice(0, start)];
    await runPool(order.length, CONFIRM_CONCURRENCY, async (at) => {
      const outcome = await this.#attempt(order[at] as Reservation);
      if (outcome === 'confirmed') done.confirmed += 1;
      if (outcome === 'released') done.released += 1;
    });
    return done;
  }

  /** One attempt under a claim, shared by the callers of this process; never rejects. */
  #attempt(reservation: Reservation): Promise<Outcome> {
    return this.#attempts.get(attemptId(reservation))?.outcome ?? this.#newAttempt(reservation);
  }

  /** The attempt under way if it began at `since` or later; otherwise a new one, shared from now on. */
  #attemptSince(reservation: Reservation, since: number): Promise<Outcome> {
    const running = this.#attempts.get(attemptId(reservation));
    return running && running.began >= since ? running.outcome : this.#newAttempt(reservation);
  }

  #newAttempt(reservation: Reservation): Promise<Outcome> {
    const id = attemptId(reservation);
    const began = Date.now();
    const attempt: Promise<Outcome> = (async (): Promise<Outcome> => {
      // An upload signed with its MD5 is told by one look at its object: not arrived (nothing to claim, no
      // write to the index), or arrived with bytes the store checked (the index's confirmation has one
      // winner). Only what needs its bytes read is claimed, so that one server reads them.
      if (reservation.md5 && this.store.confirmFromHead) {
        const seen = await this.store.confirmFromHead(reservation.key, reservation.md5);
        if (seen === 'absent' && reservation.releaseAtMs > Date.now()) return 'absent';
        if (seen !== undefined && seen !== 'absent') {
          return (await this.index.confirm(reservation, seen)) ? 'confirmed' : 'waiting';
        }
      }
      const claim = await this.index.claim(reservation, this.leaseMs);
      if (!claim) return 'busy';
      try {
        return await this.confirmOne(reservation);
      } finally {
        await this.index.unclaim(reservation, claim);
      }
    })()
      .catch((error: unknown) => {
        this.onError(error);
        return 'waiting' as const;
      })
      .finally(() => {
        this.#inFlight.delete(attempt);
        // A newer attempt may have taken this one's place: it stays.
        if (this.#attempts.get(id)?.outcome === attempt) this.#attempts.delete(id);
      });
    this.#attempts.set(id, { outcome: attempt, began });
    this.#inFlight.add(attempt);
    return attempt;
  }

  /**
   * Confirms one reservation's object if it arrived, releases the reservation if it is too late or refused.
   * An object still being written waits for a later attempt, quietly.
   */
  async confirmOne(
    reservation: Reservation,
    now = Date.now(),
  ): Promise<'confirmed' | 'released' | 'absent' | 'waiting'> {
    let object: Awaited<ReturnType<ConfirmsUploads['confirm']>>;
    try {
      object = await this.store.confirm(reservation.key, { md5: reservation.md5 });
    } catch (error) {
      if (error instanceof ObjectUnsettled) return 'waiting';
      if (!(error instanceof PutRejected)) throw error;
      // Bytes that are not what was signed are removed, and the name is free again.
      await this.store.delete(reservation.key);
      await this.index.release(reservation);
      this.onError(error);
      return 'released';
    }
    if (object) return (await this.index.confirm(reservation, object)) ? 'confirmed' : 'waiting';
    if (reservation.releaseAtMs > now) return 'absent';
    await this.index.release(reservation);
    return 'released';
  }
}
