// What every weather provider answers, in the spec's units (degrees Fahrenheit, mph).

export interface CurrentWeather {
  temperatureF: number;
  feelsLikeF: number;
  /** The primary condition code (`Clear`, `Rain`…). */
  condition: string;
  windMph: number;
  /** Degrees in [0, 360), null when calm or unknown. */
  windDirection: number | null;
  /** Percent, 0–100. */
  humidity: number;
}

export interface WeatherProvider {
  readonly name: string;
  /** Throws UpstreamError or NotConfiguredError. */
  current(latitude: number, longitude: number): Promise<CurrentWeather>;
}

export const celsiusToF = (c: number) => (c * 9) / 5 + 32;
export const kmhToMph = (kmh: number) => kmh / 1.609344;

/** A direction in [0, 360), or null for a missing one. */
export function normalizeDirection(deg: unknown): number | null {
  if (typeof deg !== 'number' || !Number.isFinite(deg)) return null;
  return ((deg % 360) + 360) % 360;
}
