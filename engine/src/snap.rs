//! Snapping: a uniform grid (about 100 m cells, in a local metric projection) over every edge's
//! segments finds the nearest usable position on an arc.

use crate::geo::{LonLat, bearing_deg};
use crate::graph::{CityGraph, EdgeId, from_fixed};

const CELL_M: f64 = 100.0;
const M_PER_DEG_LAT: f64 = 110_574.0;

/// A waypoint snapped onto an edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Snap {
    pub edge: EdgeId,
    /// Position along the edge, 0 at its tail, 1 at its head (by length).
    pub t: f64,
    pub lon: f64,
    pub lat: f64,
    /// Distance from the query point, metres.
    pub distance_m: f64,
    /// Which directions the route may leave this position in (a bearing can forbid one).
    pub forward: bool,
    pub backward: bool,
}

pub struct SnapIndex {
    min_x: f64,
    min_y: f64,
    cols: usize,
    rows: usize,
    m_per_deg_lon: f64,
    cell_first: Vec<u32>,
    cell_edges: Vec<EdgeId>,
}

impl SnapIndex {
    pub fn new(g: &CityGraph) -> SnapIndex {
        let lat0 = if g.node_count() > 0 {
            g.node_lat.iter().map(|&v| from_fixed(v)).sum::<f64>() / g.node_count() as f64
        } else {
            0.0
        };
        let m_per_deg_lon = M_PER_DEG_LAT * lat0.to_radians().cos().max(0.05);
        let proj = |lon: f64, lat: f64| (lon * m_per_deg_lon, lat * M_PER_DEG_LAT);
        let (mut min_x, mut min_y, mut max_x, mut max_y) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for v in 0..g.node_count() {
            let (x, y) = proj(from_fixed(g.node_lon[v]), from_fixed(g.node_lat[v]));
            min_x = min_x.min(x);
            min_y = min_y.min(y);
            max_x = max_x.max(x);
            max_y = max_y.max(y);
        }
        for i in 0..g.geom_lon.len() {
            let (x, y) = proj(from_fixed(g.geom_lon[i]), from_fixed(g.geom_lat[i]));
            min_x = min_x.min(x);
            min_y = min_y.min(y);
            max_x = max_x.max(x);
            max_y = max_y.max(y);
        }
        if min_x > max_x {
            (min_x, min_y, max_x, max_y) = (0.0, 0.0, 0.0, 0.0);
        }
        let cols = (((max_x - min_x) / CELL_M) as usize + 1).min(1 << 14);
        let rows = (((max_y - min_y) / CELL_M) as usize + 1).min(1 << 14);
        let mut pairs: Vec<(u32, EdgeId)> = Vec::new();
        let mut pts = Vec::new();
        for e in 0..g.edge_count() {
            pts.clear();
            g.arc_geometry(2 * e as u32, &mut pts);
            let mut cells: Vec<u32> = Vec::new();
            for s in pts.windows(2) {
                let (x0, y0) = proj(s[0][0], s[0][1]);
                let (x1, y1) = proj(s[1][0], s[1][1]);
                let (c0, c1) = (
                    ((x0.min(x1) - min_x) / CELL_M) as usize,
                    ((x0.max(x1) - min_x) / CELL_M) as usize,
                );
                let (r0, r1) = (
                    ((y0.min(y1) - min_y) / CELL_M) as usize,
                    ((y0.max(y1) - min_y) / CELL_M) as usize,
                );
                for r in r0..=r1.min(rows - 1) {
                    for c in c0..=c1.min(cols - 1) {
                        cells.push((r * cols + c) as u32);
                    }
                }
            }
            cells.sort_unstable();
            cells.dedup();
            pairs.extend(cells.into_iter().map(|c| (c, e as EdgeId)));
        }
        pairs.sort_unstable();
        let mut cell_first = vec![0u32; rows * cols + 1];
        for &(c, _) in &pairs {
            cell_first[c as usize + 1] += 1;
        }
        for i in 0..rows * cols {
            cell_first[i + 1] += cell_first[i];
        }
        SnapIndex {
            min_x,
            min_y,
            cols,
            rows,
            m_per_deg_lon,
            cell_first,
            cell_edges: pairs.into_iter().map(|(_, e)| e).collect(),
        }
    }

    pub fn memory_bytes(&self) -> usize {
        4 * (self.cell_first.len() + self.cell_edges.len())
    }

    fn proj(&self, lon: f64, lat: f64) -> (f64, f64) {
        (lon * self.m_per_deg_lon, lat * M_PER_DEG_LAT)
    }

    /// The nearest position within `max_m` on an edge that `usable(edge) -> (forward, backward)`
    /// allows. With `bearing`, only edges within `bearing_radius_m` whose direction of travel is within
    /// `tolerance` degrees count, and only in that direction.
    pub fn snap(
        &self,
        g: &CityGraph,
        lon: f64,
        lat: f64,
        max_m: f64,
        bearing: Option<(f64, f64, f64)>,
        usable: impl Fn(EdgeId) -> (bool, bool),
    ) -> Option<Snap> {
        let (px, py) = self.proj(lon, lat);
        let (cx, cy) = ((px - self.min_x) / CELL_M, (py - self.min_y) / CELL_M);
        let limit = match bearing {
            Some((_, _, radius)) => radius.min(max_m),
            None => max_m,
        };
        let max_ring = (limit / CELL_M).ceil() as i64 + 1;
        let mut best: Option<Snap> = None;
        let mut seen = std::collections::HashSet::new();
        let mut pts = Vec::new();
        for ring in 0..=max_ring {
            // Once the best lies within the ring already searched, nothing further can beat it.
            if let Some(b) = &best
                && b.distance_m <= (ring - 1).max(0) as f64 * CELL_M
            {
                break;
            }
            for dy in -ring..=ring {
                for dx in -ring..=ring {
                    if dx.abs() != ring && dy.abs() != ring {
                        continue;
                    }
                    let (c, r) = (cx as i64 + dx, cy as i64 + dy);
                    if c < 0 || r < 0 || c >= self.cols as i64 || r >= self.rows as i64 {
                        continue;
                    }
                    let cell = r as usize * self.cols + c as usize;
                    for &e in &self.cell_edges
                        [self.cell_first[cell] as usize..self.cell_first[cell + 1] as usize]
                    {
                        if !seen.insert(e) {
                            continue;
                        }
                        let (mut fwd, mut bwd) = usable(e);
                        if !fwd && !bwd {
                            continue;
                        }
                        pts.clear();
                        g.arc_geometry(2 * e, &mut pts);
                        let Some((d, t, qlon, qlat, seg_bearing)) = self.project(&pts, px, py)
                        else {
                            continue;
                        };
                        if d > limit {
                            continue;
                        }
                        if let Some((want, tolerance, _)) = bearing {
                            let off = |b: f64| {
                                let x = (b - want).rem_euclid(360.0);
                                x.min(360.0 - x)
                            };
                            fwd &= off(seg_bearing) <= tolerance;
                            bwd &= off(seg_bearing + 180.0) <= tolerance;
                            if !fwd && !bwd {
                                continue;
                            }
                        }
                        if best.as_ref().is_none_or(|b| d < b.distance_m) {
                            best = Some(Snap {
                                edge: e,
                                t,
                                lon: qlon,
                                lat: qlat,
                                distance_m: d,
                                forward: fwd,
                                backward: bwd,
                            });
                        }
                    }
                }
            }
        }
        best
    }

    /// Nearest point of a polyline: (distance m, fraction by length, lon, lat, segment bearing).
    fn project(&self, pts: &[[f64; 2]], px: f64, py: f64) -> Option<(f64, f64, f64, f64, f64)> {
        let mut total = 0.0;
        let mut best: Option<(f64, f64, f64, f64, f64)> = None; // d, along, lon, lat, bearing
        for s in pts.windows(2) {
            let (x0, y0) = self.proj(s[0][0], s[0][1]);
            let (x1, y1) = self.proj(s[1][0], s[1][1]);
            let (dx, dy) = (x1 - x0, y1 - y0);
            let len = (dx * dx + dy * dy).sqrt();
            let u = if len > 0.0 {
                (((px - x0) * dx + (py - y0) * dy) / (len * len)).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (qx, qy) = (x0 + u * dx, y0 + u * dy);
            let d = ((px - qx).powi(2) + (py - qy).powi(2)).sqrt();
            if best.is_none_or(|b| d < b.0) {
                let b = bearing_deg(LonLat::new(s[0][0], s[0][1]), LonLat::new(s[1][0], s[1][1]));
                best = Some((
                    d,
                    total + u * len,
                    qx / self.m_per_deg_lon,
                    qy / M_PER_DEG_LAT,
                    b,
                ));
            }
            total += len;
        }
        best.map(|(d, along, lon, lat, b)| {
            (
                d,
                if total > 0.0 { along / total } else { 0.0 },
                lon,
                lat,
                b,
            )
        })
    }
}
