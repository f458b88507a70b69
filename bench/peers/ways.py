"""The extract's ways, for the engine-neutral classification of the peers benchmark's routes.

Writes one JSON document: per way that a bicycle or a pedestrian may use, its id, `highway`, whether
it carries a bike lane or track, and its nodes (OSM ids and positions). Every engine's route is then
read against these ways by its geometry (bench/peers/metrics.mjs), so "metres on trunk, primary and
secondary roads" means the same thing for Quietway, OSRM and Valhalla.

    python ways.py <extract.osm.pbf> <out.json>
"""

import json
import sys

import osmium

# Ways no bicycle route can use.
SKIP = {"motorway", "motorway_link", "construction", "proposed", "abandoned", "platform", "raceway", "bus_stop"}
# A bike lane or track on the road itself (either side); `shared_lane` (sharrows) and `separate`
# (a track mapped as its own way) leave the road bare.
INFRA = {"lane", "track", "opposite_lane", "opposite_track"}
INFRA_KEYS = ("cycleway", "cycleway:both", "cycleway:left", "cycleway:right")


def main(src: str, dst: str) -> None:
    ways = []
    fp = osmium.FileProcessor(src, osmium.osm.NODE | osmium.osm.WAY).with_locations()
    for w in fp:
        if not w.is_way():
            continue
        hw = w.tags.get("highway")
        if hw is None or hw in SKIP or w.tags.get("area") == "yes":
            continue
        nodes, coords = [], []
        for n in w.nodes:
            if not n.location.valid():
                continue
            nodes.append(n.ref)
            coords.append([round(n.location.lon, 7), round(n.location.lat, 7)])
        if len(nodes) < 2:
            continue
        infra = any(w.tags.get(k) in INFRA for k in INFRA_KEYS)
        ways.append({"id": w.id, "hw": hw, "infra": infra, "nodes": nodes, "coords": coords})
    with open(dst, "w") as f:
        json.dump({"ways": ways}, f, separators=(",", ":"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
