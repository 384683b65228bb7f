/** Reservations of names for uploads that go straight to the store, kept in memory (one server). */
import { randomBytes } from 'node:crypto';
import { CLAIM_LEASE_MS, type Reservation, type ReserveOptions } from './metadata-index.js';

/** Who confirms a reservation, until when. */
interface Claim {
  id: string;
  untilMs: number;
}

/** The reservations of one in-memory index; the index says whether a name has a record. */
export class MemoryReservations {
  readonly #held = new Map<string, Reservation>();
  readonly #claims = new Map<string, Claim>();

  /**
   * Holds `key` unless it is held and not yet past its release time; `stored` says whether it has a record. A
   * held reservation made with the same MD5 is renewed with the new times and returned.
   */
  reserve(key: string, stored: boolean, options: ReserveOptions, now = Date.now()): Reservation | undefined {
    if (stored) return undefined;
    const held = this.#held.get(key);
    if (held && held.releaseAtMs > now) {
      if (!(held.md5 && options.md5?.equals(held.md5))) return undefined;
      const renewed = { ...held, urlExpiresAtMs: options.urlExpiresAtMs, releaseAtMs: options.releaseAtMs };
      this.#held.set(key, renewed);
      return renewed;
    }
    const { reservedAtMs = now, ...times } = options;
    const reservation: Reservation = { key, token: randomBytes(12).toString('hex'), ...times, reservedAtMs };
    this.#held.set(key, reservation);
    this.#claims.delete(key);
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

  /** The reservation of `key`, if any. */
  get(key: string): Reservation | undefined {
    return this.#held.get(key);
  }

  /** Ends this reservation, if it is still the one held. */
  release(reservation: Reservation): void {
    if (!this.holds(reservation)) return;
    this.#held.delete(reservation.key);
    this.#claims.delete(reservation.key);
  }

  /** Claims a held reservation unless another claim on it runs; the claim's id. */
  claim(reservation: Reservation, leaseMs = CLAIM_LEASE_MS, now = Date.now()): string | undefined {
    if (!this.holds(reservation)) return undefined;
    const running = this.#claims.get(reservation.key);
    if (running && running.untilMs > now) return undefined;
    const id = randomBytes(9).toString('hex');
    this.#claims.set(reservation.key, { id, untilMs: now + leaseMs });
    return id;
  }

  /** Ends a claim, if it is still the one on the reservation. */
  unclaim(reservation: Reservation, claim: string): void {
    if (this.#claims.get(reservation.key)?.id === claim) this.#claims.delete(reservation.key);
  }

  /** Every reservation, the oldest first. */
  pending(): Reservation[] {
    return [...this.#held.values()].sort((a, b) => a.urlExpiresAtMs - b.urlExpiresAtMs);
  }
}
