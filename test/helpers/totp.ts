import { setTimeout as sleep } from 'node:timers/promises';
import { Secret, TOTP } from 'otpauth';

const PERIOD_MS = 30_000;
/** Codes are not handed out in the last 3 s of a step, so the server checks them in the same step. */
const STEP_MARGIN_MS = 3_000;

/**
 * An authenticator app for tests: computes RFC 6238 codes (SHA-1, 6 digits, 30 s) from a base32
 * secret, each for a later time step than the one before, inside the server's ±1 step window.
 */
export class Authenticator {
  private lastStep = Number.NEGATIVE_INFINITY;

  constructor(readonly secret: string) {}

  /** The code of a given RFC 6238 time step. */
  codeAt(step: number): string {
    return TOTP.generate({ secret: Secret.fromBase32(this.secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: step * PERIOD_MS });
  }

  /** A fresh code the server accepts (waits for the next step when the window is used up). */
  async nextCode(): Promise<string> {
    for (;;) {
      const now = Date.now();
      const intoStep = now % PERIOD_MS;
      const nowStep = Math.floor(now / PERIOD_MS);
      const step = Math.max(nowStep - 1, this.lastStep + 1);
      if (intoStep > PERIOD_MS - STEP_MARGIN_MS || step > nowStep + 1) {
        await sleep(PERIOD_MS - intoStep + 100);
        continue;
      }
      this.lastStep = step;
      return this.codeAt(step);
    }
  }

  /** A well-formed code the server refuses: none of the codes of the steps around now. */
  wrongCode(): string {
    const nowStep = Math.floor(Date.now() / PERIOD_MS);
    const valid = new Set([-2, -1, 0, 1, 2].map((d) => this.codeAt(nowStep + d)));
    for (let n = 0; ; n++) {
      const candidate = String(n).padStart(6, '0');
      if (!valid.has(candidate)) return candidate;
    }
  }
}
