// Place search over the configured provider: the two parallel autocomplete calls the spec describes
// (unrestricted with a 50 km bias around `origin`; bounded to `bbox`) and details.
import type { AutocompleteQuery, LatLng, PlaceDetails, PlacePrediction, PlaceProvider } from './types.js';

/** The bias circle around `origin` on the unrestricted call (interface spec "Limits"). */
export const BIAS_RADIUS_M = 50_000;

export interface AutocompleteRequest {
  input: string;
  sessionToken: string;
  origin?: LatLng;
  bbox?: [number, number, number, number];
}

export interface AutocompleteAnswer {
  unrestricted: PlacePrediction[];
  restricted: PlacePrediction[] | null;
}

export class PlaceSearch {
  constructor(readonly provider: PlaceProvider) {}

  /**
   * Both calls at once. The unrestricted call's failure is the request's (it throws); the bounded
   * call's failure only makes `restricted` null, which clients read as "no partition available".
   */
  async autocomplete(r: AutocompleteRequest): Promise<AutocompleteAnswer> {
    const base: AutocompleteQuery = { input: r.input, sessionToken: r.sessionToken, origin: r.origin };
    const unrestricted = this.provider.autocomplete({
      ...base,
      biasRadiusMeters: r.origin ? BIAS_RADIUS_M : undefined,
    });
    const restricted = r.bbox
      ? this.provider.autocomplete({ ...base, restriction: r.bbox }).catch(() => null)
      : Promise.resolve(null);
    const [u, b] = await Promise.all([unrestricted, restricted]);
    return { unrestricted: u, restricted: b };
  }

  details(placeId: string, sessionToken: string | undefined): Promise<PlaceDetails | null> {
    return this.provider.details(placeId, sessionToken);
  }
}
