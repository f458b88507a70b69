// Departure times in a city's wall clock, and the night rule: from 30 minutes after sunset to 30
// minutes before sunrise (interface spec, directions v2).
//
// This runs on every routing request, so it works on plain numbers: an instant and the zone's UTC
// offset at it. Offsets come from luxon's IANA zones (the time-zone database Node ships) and are
// cached by zone and UTC minute; zone rules change only on minute boundaries.
import { IANAZone } from 'luxon';
import SunCalc from 'suncalc';
import { HttpError } from '../errors.js';

/** A departure: an instant and the city's UTC offset (minutes east of UTC) at that instant. */
export interface Departure {
  epochMs: number;
  offsetMinutes: number;
}

const FORMAT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;
const MINUTE = 60_000;

const offsets = new Map<string, number>();
const OFFSET_CACHE_LIMIT = 10_000;

/** The zone's offset from UTC in minutes at an instant (luxon's IANA zone rules, cached per minute). */
export function zoneOffset(zone: string, epochMs: number): number {
  const minute = Math.floor(epochMs / MINUTE);
  const key = `${zone}|${minute}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    offset = IANAZone.create(zone).offset(minute * MINUTE);
    if (offsets.size >= OFFSET_CACHE_LIMIT) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

/**
 * The instant a wall-clock time in a zone names. In the autumn overlap the earlier instant is taken;
 * a time in the spring-forward gap does not exist and gives `null`.
 */
export function fromWallClock(wallMs: number, zone: string): Departure | null {
  // Each offset the zone has within a day either side is a candidate; a candidate is right when the
  // zone has that offset at the instant it gives. Transitions are never closer than two days apart.
  let best: Departure | null = null;
  for (const probe of [wallMs - 86_400_000, wallMs, wallMs + 86_400_000]) {
    const offsetMinutes = zoneOffset(zone, probe);
    const epochMs = wallMs - offsetMinutes * MINUTE;
    if (zoneOffset(zone, epochMs) !== offsetMinutes) continue;
    if (!best || epochMs < best.epochMs) best = { epochMs, offsetMinutes };
  }
  return best;
}

/** Parses `YYYY-MM-DDTHH:mm` in the zone; absent means now. Unparseable or non-existent → 400. */
export function departureIn(
  value: string | undefined,
  zone: string,
  now: () => Date = () => new Date(),
): Departure {
  if (value === undefined) {
    const epochMs = Math.floor(now().getTime() / MINUTE) * MINUTE;
    return { epochMs, offsetMinutes: zoneOffset(zone, epochMs) };
  }
  const m = FORMAT.exec(value);
  const wall = m
    ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]))
    : Number.NaN;
  // Date.UTC rolls over (February 30th → March 2nd): the wall clock must read back unchanged.
  const valid = !Number.isNaN(wall) && new Date(wall).toISOString().slice(0, 16) === value;
  const dt = valid ? fromWallClock(wall, zone) : null;
  if (!dt) {
    throw new HttpError(400, 'departure_time is not a valid wall-clock time (YYYY-MM-DDTHH:mm, city time)');
  }
  return dt;
}

/** Minutes since 1970-01-01 00:00 on the local wall clock (how the engine keys avoidance windows). */
export function localMinutes(dt: Departure): number {
  return Math.floor(dt.epochMs / MINUTE) + dt.offsetMinutes;
}

export function isNight(dt: Departure, lon: number, lat: number): boolean {
  const t = dt.epochMs;
  const offsetMs = dt.offsetMinutes * MINUTE;
  // Sun times of the local calendar day: local noon, by arithmetic on the offset (no zone lookups).
  const localMidnight = Math.floor((t + offsetMs) / 86_400_000) * 86_400_000;
  const noon = new Date(localMidnight + 12 * 3_600_000 - offsetMs);
  const { sunrise, sunset } = SunCalc.getTimes(noon, lat, lon);
  const margin = 30 * MINUTE;
  if (Number.isNaN(sunrise.getTime()) || Number.isNaN(sunset.getTime())) {
    // Polar day or night: the sun's altitude at noon decides.
    return SunCalc.getPosition(noon, lat, lon).altitude < 0;
  }
  return t >= sunset.getTime() + margin || t <= sunrise.getTime() - margin;
}

/** The local calendar date (YYYY-MM-DD) a number of days from the departure's. */
export function localDate(dt: Departure, days = 0): string {
  const day = Math.floor(localMinutes(dt) / 1440) + days;
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}
