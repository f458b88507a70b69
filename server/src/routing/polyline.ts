// Encoded polylines (precision 5, [lat, lon] order, as Google and Mapbox define them) and
// Douglas–Peucker simplification for v1's `overview: simplified`.

export function encodePolyline(coords: number[][], precision = 5): string {
  const f = 10 ** precision;
  let out = '';
  let [plat, plon] = [0, 0];
  const enc = (v: number) => {
    let n = v < 0 ? ~(v << 1) : v << 1;
    let s = '';
    while (n >= 0x20) {
      s += String.fromCharCode((0x20 | (n & 0x1f)) + 63);
      n >>= 5;
    }
    return s + String.fromCharCode(n + 63);
  };
  for (const [lon, lat] of coords as [number, number][]) {
    const [ilat, ilon] = [Math.round(lat * f), Math.round(lon * f)];
    out += enc(ilat - plat) + enc(ilon - plon);
    [plat, plon] = [ilat, ilon];
  }
  return out;
}

export function decodePolyline(s: string, precision = 5): number[][] {
  const f = 10 ** precision;
  const out: number[][] = [];
  let [i, lat, lon] = [0, 0, 0];
  const dec = () => {
    let [shift, result, b] = [0, 0, 0];
    do {
      b = s.charCodeAt(i++) - 63;
      result |= (b & 0x1f) << shift;
      shift += 5;
    } while (b >= 0x20);
    return result & 1 ? ~(result >> 1) : result >> 1;
  };
  while (i < s.length) {
    lat += dec();
    lon += dec();
    out.push([lon / f, lat / f]);
  }
  return out;
}

/** Douglas–Peucker with a tolerance in metres (local projection). */
export function simplify(coords: number[][], toleranceM = 5): number[][] {
  if (coords.length <= 2) return coords;
  const lat0 = ((coords[0]?.[1] ?? 0) * Math.PI) / 180;
  const kx = (Math.PI * 6_371_008.8 * Math.cos(lat0)) / 180;
  const ky = (Math.PI * 6_371_008.8) / 180;
  const xy = coords.map(([x, y]) => [(x as number) * kx, (y as number) * ky] as [number, number]);
  const keep = new Uint8Array(coords.length);
  keep[0] = 1;
  keep[coords.length - 1] = 1;
  const stack: [number, number][] = [[0, coords.length - 1]];
  while (stack.length > 0) {
    const [a, b] = stack.pop() as [number, number];
    const [ax, ay] = xy[a] as [number, number];
    const [bx, by] = xy[b] as [number, number];
    const [dx, dy] = [bx - ax, by - ay];
    const len2 = dx * dx + dy * dy;
    let [best, at] = [-1, -1];
    for (let i = a + 1; i < b; i++) {
      const [px, py] = xy[i] as [number, number];
      const t = len2 > 0 ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / len2)) : 0;
      const d = Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
      if (d > best) [best, at] = [d, i];
    }
    if (best > toleranceM) {
      keep[at] = 1;
      stack.push([a, at], [at, b]);
    }
  }
  return coords.filter((_, i) => keep[i] === 1);
}
