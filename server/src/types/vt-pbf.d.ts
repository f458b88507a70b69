// vt-pbf ships no types; the one function the safety map uses.
declare module 'vt-pbf' {
  /** Encodes geojson-vt tiles, one per layer name, as a Mapbox Vector Tile (protobuf). */
  export function fromGeojsonVt(
    layers: Record<string, unknown>,
    options?: { version?: number; extent?: number },
  ): Uint8Array;
}
