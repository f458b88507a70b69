// The Open-Meteo-compatible weather provider, the embedded default (no key): `GET /v1/forecast`
// with the `current` variables, asked in Fahrenheit and mph so no conversion is needed.
import { fetchJson, UpstreamError } from '../upstream.js';
import { conditionOfWmo } from './conditions.js';
import { type CurrentWeather, normalizeDirection, type WeatherProvider } from './types.js';

const CURRENT = [
  'temperature_2m',
  'apparent_temperature',
  'relative_humidity_2m',
  'weather_code',
  'wind_speed_10m',
  'wind_direction_10m',
].join(',');

export class OpenMeteoProvider implements WeatherProvider {
  readonly name = 'open-meteo';

  constructor(private readonly baseUrl: string) {}

  async current(latitude: number, longitude: number): Promise<CurrentWeather> {
    const url = new URL(`${this.baseUrl}/v1/forecast`);
    url.searchParams.set('latitude', String(latitude));
    url.searchParams.set('longitude', String(longitude));
    url.searchParams.set('current', CURRENT);
    url.searchParams.set('temperature_unit', 'fahrenheit');
    url.searchParams.set('wind_speed_unit', 'mph');
    const json = (await fetchJson(url.toString())) as { current?: Record<string, unknown> };
    const c = json?.current;
    const num = (k: string) => {
      const v = c?.[k];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new UpstreamError('invalid', `answered without current.${k}`);
      }
      return v;
    };
    const temperatureF = num('temperature_2m');
    return {
      temperatureF,
      feelsLikeF: typeof c?.apparent_temperature === 'number' ? c.apparent_temperature : temperatureF,
      condition: conditionOfWmo(num('weather_code')),
      windMph: num('wind_speed_10m'),
      windDirection: normalizeDirection(c?.wind_direction_10m),
      humidity: num('relative_humidity_2m'),
    };
  }
}
