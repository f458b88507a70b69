// Current weather for a coordinate in the spec's shape, cached 10 minutes per coordinate rounded to
// 0.01° (about 1 km: the weather does not change across it), with one upstream call per key at a
// time. Recorded rides take their weather fields from here.
import { conditionsOf, conditionWords } from './conditions.js';
import type { CurrentWeather, WeatherProvider } from './types.js';

/** The spec's weather cache lifetime (interface spec "Limits"). */
export const WEATHER_CACHE_SECONDS = 600;
const MAX_ENTRIES = 10_000;

export interface WeatherView {
  temperature: number;
  feels_like: number;
  conditions: string[];
  wind_speed: number;
  wind_direction: number | null;
  humidity: number;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

export function viewWeather(w: CurrentWeather): WeatherView {
  const temperature = round1(w.temperatureF);
  const direction = w.windDirection === null ? null : round1(w.windDirection) % 360;
  return {
    temperature,
    feels_like: round1(w.feelsLikeF),
    conditions: conditionsOf(w.condition, temperature),
    wind_speed: round1(w.windMph),
    wind_direction: direction,
    humidity: Math.max(0, Math.min(100, Math.round(w.humidity))),
  };
}

/** The line a ride shows, e.g. `52°F, partly cloudy`. */
export function weatherDisplay(v: WeatherView): string {
  return `${Math.round(v.temperature)}°F, ${conditionWords(v.conditions[0] ?? '').toLowerCase()}`;
}

export class WeatherService {
  private readonly cache = new Map<string, { view: WeatherView; expiresAt: number }>();
  private readonly inFlight = new Map<string, Promise<WeatherView>>();

  constructor(
    readonly provider: WeatherProvider,
    private readonly clock: () => number = Date.now,
  ) {}

  async current(latitude: number, longitude: number): Promise<WeatherView> {
    const lat = Math.round(latitude * 100) / 100;
    const lon = Math.round(longitude * 100) / 100;
    const key = `${lat},${lon}`;
    const now = this.clock();
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > now) return hit.view;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const call = this.provider
      .current(lat, lon)
      .then((w) => {
        const view = viewWeather(w);
        if (this.cache.size >= MAX_ENTRIES) this.sweep(now);
        this.cache.set(key, { view, expiresAt: this.clock() + WEATHER_CACHE_SECONDS * 1000 });
        return view;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, call);
    return call;
  }

  private sweep(now: number): void {
    for (const [k, v] of this.cache) if (v.expiresAt <= now) this.cache.delete(k);
    // Still full: drop the oldest entries (a Map iterates in insertion order).
    for (const k of this.cache.keys()) {
      if (this.cache.size < MAX_ENTRIES) break;
      this.cache.delete(k);
    }
  }
}
