// The Apple WeatherKit provider: `GET /api/v1/weather/{language}/{lat}/{lon}?dataSets=currentWeather`
// with a developer token: an ES256 JWT whose header carries the key id (`kid`) and
// `id` = `<team id>.<service id>`, and whose claims are the team (`iss`) and service (`sub`).
// Tokens are reused until ten minutes before they expire.
import { importPKCS8, SignJWT } from 'jose';
import { fetchJson, NotConfiguredError, UpstreamError } from '../upstream.js';
import {
  type CurrentWeather,
  celsiusToF,
  kmhToMph,
  normalizeDirection,
  type WeatherProvider,
} from './types.js';

export interface WeatherKitCredentials {
  teamId: string;
  serviceId: string;
  keyId: string;
  /** The `.p8` private key, PEM (PKCS #8). */
  privateKeyPem: string;
}

const TOKEN_SECONDS = 3600;
const RENEW_BEFORE_SECONDS = 600;

export class WeatherKitProvider implements WeatherProvider {
  readonly name = 'weatherkit';
  private token: { jwt: string; expiresAt: number } | null = null;

  constructor(
    private readonly credentials: WeatherKitCredentials | null,
    private readonly baseUrl: string,
  ) {}

  /** The developer token (exported for tests, which check its header and claims). */
  async developerToken(now = Math.floor(Date.now() / 1000)): Promise<string> {
    const c = this.credentials;
    if (!c) throw new NotConfiguredError('Weather is not configured (WeatherKit credentials missing)');
    if (this.token && this.token.expiresAt - RENEW_BEFORE_SECONDS > now) return this.token.jwt;
    let key: Awaited<ReturnType<typeof importPKCS8>>;
    try {
      key = await importPKCS8(c.privateKeyPem, 'ES256');
    } catch {
      throw new NotConfiguredError(
        'Weather is not configured (the WeatherKit private key is not a PKCS #8 EC key)',
      );
    }
    const jwt = await new SignJWT({ sub: c.serviceId })
      .setProtectedHeader({ alg: 'ES256', kid: c.keyId, id: `${c.teamId}.${c.serviceId}` })
      .setIssuer(c.teamId)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_SECONDS)
      .sign(key);
    this.token = { jwt, expiresAt: now + TOKEN_SECONDS };
    return jwt;
  }

  async current(latitude: number, longitude: number): Promise<CurrentWeather> {
    const token = await this.developerToken();
    const url = `${this.baseUrl}/api/v1/weather/en/${latitude}/${longitude}?dataSets=currentWeather`;
    const json = (await fetchJson(url, { headers: { authorization: `Bearer ${token}` } })) as {
      currentWeather?: Record<string, unknown>;
    };
    const c = json?.currentWeather;
    const num = (k: string) => {
      const v = c?.[k];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new UpstreamError('invalid', `answered without currentWeather.${k}`);
      }
      return v;
    };
    if (typeof c?.conditionCode !== 'string') {
      throw new UpstreamError('invalid', 'answered without currentWeather.conditionCode');
    }
    const temperatureF = celsiusToF(num('temperature'));
    return {
      temperatureF,
      feelsLikeF:
        typeof c.temperatureApparent === 'number' ? celsiusToF(c.temperatureApparent) : temperatureF,
      condition: c.conditionCode,
      windMph: kmhToMph(num('windSpeed')),
      windDirection: normalizeDirection(c.windDirection),
      // WeatherKit gives a fraction.
      humidity: num('humidity') * 100,
    };
  }
}
