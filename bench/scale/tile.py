"""A city-sized stand-in from a sample extract: the sample tiled k × k, stitched at the seams.

No whole-city extract can be downloaded here, so the scale benchmark (bench/scale/scale.mjs) builds one:
k × k copies of the sample's routable data (every way the graph pipeline reads, the nodes they use,
bicycle-parking nodes, turn restrictions and signed cycle routes), each copy shifted by the sample's
width and height (its widest row, its tallest column) so the copies lie side by side, with the same tags and density as the sample. OSM ids
are renumbered densely per copy (copy t's elements are numbered after copy t-1's), so they stay within
what OSRM's packed ids hold. Neighbouring copies are joined at their seams by ordinary two-node
`highway=residential` ways (named "Seam Street"): per row of `--seam-step-m` metres along a seam, from
the copy's outermost street node in that row to the neighbour's facing one (see `tile`).

Writes the tiled extract (PBF) and a GeoJSON box around it (the coverage boundary for the pipeline).

    python tile.py <sample.osm.pbf> <k> <out.osm.pbf> <out-boundary.geojson> [--seam-step-m 400]
"""

import argparse
import json
import math
import sys

import osmium

# Streets a seam may join: ridden and driven both ways in the sample's data.
STREETS = {"residential", "tertiary", "secondary", "primary", "unclassified", "living_street", "service",
           "tertiary_link", "secondary_link"}
# The longest seam way (metres): a seam is an ordinary street, not a bridge over a gap.
MAX_SEAM_M = 1500.0


def candidate_way(tags) -> bool:
    # Mirrors the pipeline's reader (graph-pipeline/src/osm.rs, is_candidate_way).
    return "highway" in tags or tags.get("route") == "ferry" or tags.get("amenity") == "bicycle_parking"


def candidate_relation(tags) -> bool:
    t = tags.get("type", "")
    return t == "restriction" or t.startswith("restriction:") or (t == "route" and tags.get("route") == "bicycle")


class Sample:
    """The sample's routable data, held once in memory (a few hundred thousand nodes)."""

    def __init__(self, path: str):
        ways, rels = {}, {}
        for o in osmium.FileProcessor(path, osmium.osm.WAY | osmium.osm.RELATION):
            tags = dict(o.tags)
            if o.is_way() and candidate_way(tags):
                prev = ways.get(o.id)
                if prev is None or prev[0] < o.version:
                    ways[o.id] = (o.version, [n.ref for n in o.nodes], tags)
            elif o.is_relation() and candidate_relation(tags):
                prev = rels.get(o.id)
                if prev is None or prev[0] < o.version:
                    rels[o.id] = (o.version, [(m.type, m.ref, m.role) for m in o.members], tags)
        used = {n for _, refs, _ in ways.values() for n in refs}
        nodes = {}
        for o in osmium.FileProcessor(path, osmium.osm.NODE):
            tags = dict(o.tags)
            if (o.id in used or tags.get("amenity") == "bicycle_parking") and o.location.valid():
                prev = nodes.get(o.id)
                if prev is None or prev[0] < o.version:
                    nodes[o.id] = (o.version, o.location.lon, o.location.lat, tags)
        # Ways keep only the nodes the extract has (a clipped way's outside nodes are gone).
        self.nodes = {i: (lon, lat, tags) for i, (_, lon, lat, tags) in nodes.items()}
        self.ways = {}
        for i, (_, refs, tags) in ways.items():
            refs = [r for r in refs if r in self.nodes]
            if len(refs) >= 2 or tags.get("amenity") == "bicycle_parking":
                self.ways[i] = (refs, tags)
        self.rels = {i: (members, tags) for i, (_, members, tags) in rels.items()}
        self.node_index = {i: k for k, i in enumerate(sorted(self.nodes))}
        self.way_index = {i: k for k, i in enumerate(sorted(self.ways))}
        self.rel_index = {i: k for k, i in enumerate(sorted(self.rels))}
        lons = [v[0] for v in self.nodes.values()]
        lats = [v[1] for v in self.nodes.values()]
        self.bbox = (min(lons), min(lats), max(lons), max(lats))
        # Street nodes a seam may start or end at.
        street = {r for refs, tags in self.ways.values() if tags.get("highway") in STREETS for r in refs}
        self.street_nodes = [(i, *self.nodes[i][:2]) for i in sorted(street)]


def metres(a, b, lat0):
    kx = 111_320.0 * math.cos(math.radians(lat0))
    return math.hypot((a[0] - b[0]) * kx, (a[1] - b[1]) * 110_574.0)


def tile(sample: Sample, k: int, out: str, boundary: str, seam_step_m: float) -> dict:
    w, s, e, n = sample.bbox
    lat0 = (s + n) / 2
    kx = 111_320.0 * math.cos(math.radians(lat0))
    nn, nw, nr = len(sample.node_index), len(sample.way_index), len(sample.rel_index)
    seam_ways = seam_nodes = 0

    def nid(t, i):
        return t * nn + sample.node_index[i] + 1

    def shift(t):
        return (t % k) * dlon, (t // k) * dlat

    # Copies are shifted by the widest row's width (rows of `seam_step_m` along the seam) and the
    # tallest column's height, so no two copies overlap and the widest row meets its neighbour. Seams:
    # per row, the easternmost street node of one copy joined to the westernmost of the copy east of
    # it; per column, the northernmost to the southernmost of the copy north of it; where the gap
    # between them is at most MAX_SEAM_M.
    row_h = seam_step_m / 110_574.0
    col_w = seam_step_m / kx
    rows, cols = {}, {}
    for p in sample.street_nodes:
        rows.setdefault(int((p[2] - s) / row_h), []).append(p)
        cols.setdefault(int((p[1] - w) / col_w), []).append(p)
    dlon = max(max(p[1] for p in r) - min(p[1] for p in r) for r in rows.values()) + 30.0 / kx
    dlat = max(max(p[2] for p in c) - min(p[2] for p in c) for c in cols.values()) + 30.0 / 110_574.0

    def joins(groups, axis, offset):
        out = []
        for g in groups.values():
            a = max(g, key=lambda p: p[axis])
            b = min(g, key=lambda p: p[axis])
            if metres((a[1], a[2]), (b[1] + offset[0], b[2] + offset[1]), lat0) <= MAX_SEAM_M:
                out.append((a[0], b[0]))
        return out

    east_pairs = joins(rows, 1, (dlon, 0.0))
    north_pairs = joins(cols, 2, (0.0, dlat))

    writer = osmium.SimpleWriter(out, overwrite=True)
    try:
        for t in range(k * k):
            ox, oy = shift(t)
            for i in sorted(sample.nodes):
                lon, lat, tags = sample.nodes[i]
                writer.add_node(osmium.osm.mutable.Node(
                    id=nid(t, i), version=1, location=(lon + ox, lat + oy), tags=tags))
        next_way = k * k * nw + 1
        for t in range(k * k):
            for i in sorted(sample.ways):
                refs, tags = sample.ways[i]
                writer.add_way(osmium.osm.mutable.Way(
                    id=t * nw + sample.way_index[i] + 1, version=1,
                    nodes=[nid(t, r) for r in refs], tags=tags))
        for t in range(k * k):
            x, y = t % k, t // k
            joins = []
            if x + 1 < k:
                joins += [(nid(t, a), nid(t + 1, b)) for a, b in east_pairs]
            if y + 1 < k:
                joins += [(nid(t, a), nid(t + k, b)) for a, b in north_pairs]
            for a, b in joins:
                writer.add_way(osmium.osm.mutable.Way(
                    id=next_way, version=1, nodes=[a, b],
                    tags={"highway": "residential", "name": "Seam Street"}))
                next_way += 1
                seam_ways += 1
        for t in range(k * k):
            for i in sorted(sample.rels):
                members, tags = sample.rels[i]
                kept = []
                for typ, ref, role in members:
                    if typ == "n" and ref in sample.node_index:
                        kept.append(("n", nid(t, ref), role))
                    elif typ == "w" and ref in sample.way_index:
                        kept.append(("w", t * nw + sample.way_index[ref] + 1, role))
                    elif typ == "r" and ref in sample.rel_index:
                        kept.append(("r", t * nr + sample.rel_index[ref] + 1, role))
                if kept:
                    writer.add_relation(osmium.osm.mutable.Relation(
                        id=t * nr + sample.rel_index[i] + 1, version=1, members=kept, tags=tags))
    finally:
        writer.close()

    margin = 0.01
    box = [w - margin, s - margin, e + (k - 1) * dlon + margin, n + (k - 1) * dlat + margin]
    ring = [[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]], [box[0], box[1]]]
    with open(boundary, "w") as f:
        json.dump({"type": "FeatureCollection", "features": [{
            "type": "Feature", "properties": {"name": f"Tiled sample {k} x {k}"},
            "geometry": {"type": "Polygon", "coordinates": [ring]}}]}, f)
    return {
        "k": k,
        "copies": k * k,
        "nodes": k * k * nn,
        "ways": k * k * nw + seam_ways,
        "relations": k * k * nr,
        "seam_ways": seam_ways,
        "seam_node_pairs": {"east": len(east_pairs), "north": len(north_pairs)},
        "bbox": box,
        "sample_bbox": list(sample.bbox),
        # Copy t lies (t % k) * dlon east and (t // k) * dlat north of the sample (degrees).
        "copy_shift_deg": [dlon, dlat],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sample")
    p.add_argument("k", type=int)
    p.add_argument("out")
    p.add_argument("boundary")
    p.add_argument("--seam-step-m", type=float, default=400.0)
    a = p.parse_args()
    if a.k < 1:
        sys.exit("k must be at least 1")
    info = tile(Sample(a.sample), a.k, a.out, a.boundary, a.seam_step_m)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
