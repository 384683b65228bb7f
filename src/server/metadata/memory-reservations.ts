/** Reservations of names for uploads that go straight to the store, kept in memory (one server). */
import { randomBytes } from 'node:crypto';
import type { Reservation, ReserveOptions } from './metadata-index.js';

/** The reservations of one in-memory index; the index says whether a name has a record. */
export class MemoryReservations {
  readonly #held = new Map<string, Reservation>();

  /** Holds `key` unless it is held and not yet past its release time; `stored` says whether it has a record. */
  reserve(key: string, stored: boolean, options: ReserveOptions, now = Date.now()): Reservation | undefined {
    if (stored) return undefined;
    const held = this.#held.get(key);
    if (held && held.releaseAtMs > now) return undefined;
    const reservation: Reservation = { key, token: randomBytes(12).toString('hex'), ...options };
    this.#held.set(key, reservation);
    return reservation;
  }

  /** True when this very reservation is held. */
  holds(reservation: Reservation): boolean {
    return this.#held.get(reservation.key)?.token === reservation.token;
  }

  /** True when `key` has any reservation. */
  has(key: string): boolean {
    return this.#held.has(key);
  }

  /** Ends this reservation, if it is still the one held. */
  release(reservation: Reservation): void {
    if (this.holds(reservation)) this.#held.delete(reservation.key);
  }

  /** Every reservation, the oldest first. */
  pending(): Reservation[] {
    return [...this.#held.values()].sort((a, b) => a.urlExpiresAtMs - b.urlExpiresAtMs);
  }
}
