// What every place-search provider answers (interface spec "Place prediction"; decisions.md's
// details shape). Absent fields are left out, never null.

export interface LatLng {
  latitude: number;
  longitude: number;
}

export interface PlacePrediction {
  placeId: string;
  text: { text: string };
  structuredFormat: { mainText: { text: string }; secondaryText?: { text: string } };
  types?: string[];
  distanceMeters?: number;
}

export interface PlaceDetails {
  placeId: string;
  displayName: string;
  formattedAddress: string;
  location: LatLng;
  types: string[];
}

export interface AutocompleteQuery {
  input: string;
  sessionToken: string;
  origin?: LatLng;
  /** Unrestricted call: a bias circle around `origin`. */
  biasRadiusMeters?: number;
  /** Bounded call: `[minLng, minLat, maxLng, maxLat]`. */
  restriction?: [number, number, number, number];
}

export interface PlaceProvider {
  readonly name: string;
  /** Predictions in the provider's ranking. Throws UpstreamError or NotConfiguredError. */
  autocomplete(query: AutocompleteQuery): Promise<PlacePrediction[]>;
  /** The place a prediction names, or null when there is none. Ends the session. */
  details(placeId: string, sessionToken: string | undefined): Promise<PlaceDetails | null>;
}
