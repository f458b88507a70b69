// Departure times in a city's wall clock, and the night rule: from 30 minutes after sunset to 30
// minutes before sunrise (interface spec, directions v2).
import { DateTime } from 'luxon';
import SunCalc from 'suncalc';
import { HttpError } from '../errors.js';

const FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/;

/** Parses `YYYY-MM-DDTHH:mm` in the zone; absent means now. Unparseable → 400. */
export function departureIn(
  value: string | undefined,
  zone: string,
  now: () => Date = () => new Date(),
): DateTime {
  if (value === undefined) return DateTime.fromJSDate(now(), { zone }).startOf('minute');
  const dt = FORMAT.test(value) ? DateTime.fromISO(value, { zone }) : null;
  // A wall-clock time that does not exist (spring-forward gap) is refused too.
  if (!dt?.isValid || dt.toFormat("yyyy-MM-dd'T'HH:mm") !== value) {
    throw new HttpError(400, 'departure_time is not a valid wall-clock time (YYYY-MM-DDTHH:mm, city time)');
  }
  return dt;
}

/** Minutes since 1970-01-01 00:00 on the local wall clock (how the engine keys avoidance windows). */
export function localMinutes(dt: DateTime): number {
  return Math.floor((dt.toMillis() + dt.offset * 60_000) / 60_000);
}

export function isNight(dt: DateTime, lon: number, lat: number): boolean {
  const t = dt.toMillis();
  // Sun times of the local calendar day: local noon, by arithmetic on the offset (no zone lookups).
  const localMidnight = Math.floor((t + dt.offset * 60_000) / 86_400_000) * 86_400_000;
  const noon = new Date(localMidnight + 12 * 3_600_000 - dt.offset * 60_000);
  const { sunrise, sunset } = SunCalc.getTimes(noon, lat, lon);
  const margin = 30 * 60_000;
  if (Number.isNaN(sunrise.getTime()) || Number.isNaN(sunset.getTime())) {
    // Polar day or night: the sun's altitude at noon decides.
    return SunCalc.getPosition(noon, lat, lon).altitude < 0;
  }
  return t >= sunset.getTime() + margin || t <= sunrise.getTime() - margin;
}

/** The local calendar date (YYYY-MM-DD) a number of days from the departure's. */
export function localDate(dt: DateTime, days = 0): string {
  const day = Math.floor(localMinutes(dt) / 1440) + days;
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}
