// Departure parsing on plain numbers, checked against luxon's own wall-clock arithmetic across the
// routed cities' zones, daylight-saving transitions included.
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../server/src/errors.js';
import { departureIn, localDate, localMinutes } from '../../server/src/routing/time.js';

const ZONES = ['America/New_York', 'America/Chicago', 'Europe/London', 'Australia/Lord_Howe', 'UTC'];

const wall = (dt: DateTime) => dt.toFormat("yyyy-MM-dd'T'HH:mm");

describe('departureIn', () => {
  it('agrees with luxon on every quarter hour around the 2026 transitions and on random times', () => {
    const values: string[] = [];
    for (const day of ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01']) {
      for (let m = 0; m < 24 * 60; m += 15) {
        values.push(
          `${day}T${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`,
        );
      }
    }
    let s = 7;
    for (let i = 0; i < 500; i++) {
      s = (s * 1103515245 + 12345) % 2147483648;
      values.push(
        wall(DateTime.fromMillis(Date.UTC(2000, 0, 1) + (s % 1_000_000) * 1_000_000, { zone: 'UTC' })),
      );
    }
    for (const zone of ZONES) {
      for (const v of values) {
        const lux = DateTime.fromISO(v, { zone });
        if (wall(lux) !== v) {
          // In the spring-forward gap: the time does not exist.
          expect(() => departureIn(v, zone)).toThrow(HttpError);
          continue;
        }
        const d = departureIn(v, zone);
        // The same wall clock, and the earlier instant where the clock reads it twice.
        expect(localMinutes(d)).toBe(Math.floor((lux.toMillis() + lux.offset * 60_000) / 60_000));
        expect(d.epochMs).toBeLessThanOrEqual(lux.toMillis());
        expect(wall(DateTime.fromMillis(d.epochMs, { zone }))).toBe(v);
        expect(localDate(d)).toBe(v.slice(0, 10));
      }
    }
  });

  it('refuses impossible dates and malformed values with 400', () => {
    for (const v of [
      '2026-02-30T10:00',
      '2026-13-01T10:00',
      '2026-01-01T24:00',
      '2026-01-01 10:00',
      '2026-01-01T10:00Z',
    ]) {
      expect(() => departureIn(v, 'Europe/London')).toThrow(/departure_time/);
    }
  });

  it('takes the earlier instant in the autumn overlap (01:30 on 1 November 2026 in New York is EDT)', () => {
    const d = departureIn('2026-11-01T01:30', 'America/New_York');
    expect(d.offsetMinutes).toBe(-240);
    expect(new Date(d.epochMs).toISOString()).toBe('2026-11-01T05:30:00.000Z');
  });

  it('defaults to now, to the minute, with the zone offset', () => {
    const d = departureIn(undefined, 'Europe/London', () => new Date('2026-07-01T12:34:56Z'));
    expect(new Date(d.epochMs).toISOString()).toBe('2026-07-01T12:34:00.000Z');
    expect(d.offsetMinutes).toBe(60);
  });
});
