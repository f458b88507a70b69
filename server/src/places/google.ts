// The `google` place-search provider: Places API (New) autocomplete (`POST /v1/places:autocomplete`)
// and place details (`GET /v1/places/{id}`), with the key in `X-Goog-Api-Key`. The base URL is
// configurable, so a deployment can use a proxy and tests a loopback server.
import { fetchJson, NotConfiguredError, UpstreamError } from '../upstream.js';
import type { AutocompleteQuery, PlaceDetails, PlacePrediction, PlaceProvider } from './types.js';

/** The fields the details call asks for (billing follows the field mask). */
const DETAILS_FIELDS = 'id,displayName,formattedAddress,location,types';

interface GoogleText {
  text?: string;
}

interface GooglePlacePrediction {
  placeId?: string;
  text?: GoogleText;
  structuredFormat?: { mainText?: GoogleText; secondaryText?: GoogleText };
  types?: string[];
  distanceMeters?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** A Places prediction in the spec's shape; null for anything that is not a place prediction. */
export function toPrediction(suggestion: unknown, withDistance: boolean): PlacePrediction | null {
  if (!isObject(suggestion) || !isObject(suggestion.placePrediction)) return null;
  const p = suggestion.placePrediction as GooglePlacePrediction;
  const text = p.text?.text;
  if (typeof p.placeId !== 'string' || typeof text !== 'string') return null;
  const main = p.structuredFormat?.mainText?.text ?? text;
  const secondary = p.structuredFormat?.secondaryText?.text;
  return {
    placeId: p.placeId,
    text: { text },
    structuredFormat: {
      mainText: { text: main },
      ...(typeof secondary === 'string' ? { secondaryText: { text: secondary } } : {}),
    },
    ...(Array.isArray(p.types) ? { types: p.types.filter((t) => typeof t === 'string') } : {}),
    ...(withDistance && typeof p.distanceMeters === 'number' ? { distanceMeters: p.distanceMeters } : {}),
  };
}

export class GooglePlaceProvider implements PlaceProvider {
  readonly name = 'google';

  constructor(
    private readonly apiKey: string | undefined,
    private readonly baseUrl: string,
  ) {}

  private key(): string {
    if (!this.apiKey) throw new NotConfiguredError('Place search is not configured (no Google API key)');
    return this.apiKey;
  }

  async autocomplete(q: AutocompleteQuery): Promise<PlacePrediction[]> {
    const body: Record<string, unknown> = { input: q.input, sessionToken: q.sessionToken };
    if (q.origin) body.origin = q.origin;
    if (q.restriction) {
      const [minLng, minLat, maxLng, maxLat] = q.restriction;
      body.locationRestriction = {
        rectangle: {
          low: { latitude: minLat, longitude: minLng },
          high: { latitude: maxLat, longitude: maxLng },
        },
      };
    } else if (q.origin && q.biasRadiusMeters) {
      body.locationBias = { circle: { center: q.origin, radius: q.biasRadiusMeters } };
    }
    const json = await fetchJson(`${this.baseUrl}/v1/places:autocomplete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': this.key() },
      body: JSON.stringify(body),
    });
    if (!isObject(json)) throw new UpstreamError('invalid', 'answered with something other than an object');
    const suggestions = Array.isArray(json.suggestions) ? json.suggestions : [];
    return suggestions
      .map((s) => toPrediction(s, q.origin !== undefined))
      .filter((p): p is PlacePrediction => p !== null);
  }

  async details(placeId: string, sessionToken: string | undefined): Promise<PlaceDetails | null> {
    const url = new URL(`${this.baseUrl}/v1/places/${encodeURIComponent(placeId)}`);
    if (sessionToken) url.searchParams.set('sessionToken', sessionToken);
    let json: unknown;
    try {
      json = await fetchJson(url.toString(), {
        headers: { 'x-goog-api-key': this.key(), 'x-goog-fieldmask': DETAILS_FIELDS },
      });
    } catch (err) {
      // Google answers 404 for an unknown place and 400 for a malformed id: no such place.
      if (err instanceof UpstreamError && (err.status === 404 || err.status === 400)) return null;
      throw err;
    }
    if (!isObject(json)) throw new UpstreamError('invalid', 'answered with something other than an object');
    const location = isObject(json.location) ? json.location : {};
    const displayName = isObject(json.displayName) ? json.displayName.text : undefined;
    if (typeof location.latitude !== 'number' || typeof location.longitude !== 'number') {
      throw new UpstreamError('invalid', 'answered a place without a location');
    }
    return {
      placeId: typeof json.id === 'string' ? json.id : placeId,
      displayName: typeof displayName === 'string' ? displayName : '',
      formattedAddress: typeof json.formattedAddress === 'string' ? json.formattedAddress : '',
      location: { latitude: location.latitude, longitude: location.longitude },
      types: Array.isArray(json.types) ? json.types.filter((t): t is string => typeof t === 'string') : [],
    };
  }
}
