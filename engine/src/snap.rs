//! Snapping: a uniform grid (about 100 m cells, in a local metric projection) over every edge's
//! segments finds the nearest usable position on an arc.

use crate::cch::IdHash;
use crate::geo::{LonLat, bearing_deg};
use crate::graph::{CityGraph, EdgeId, from_fixed};
use std::collections::HashSet;

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
    /// Compass bearing of the edge's segment at the position, tail to head, degrees.
    pub heading_deg: f64,
}

pub struct SnapIndex {
    min_x: f64,
    min_y: f64,
    cols: usize,
    rows: usize,
    m_per_deg_lon: f64,
    cell_first: Vec<u32>,
    cell_edges: Vec<EdgeId>,
    /// Each edge's bounding box in the projection, `[min x, min y, max x, max y]` metres from
    /// `(min_x, min_y)`: an edge whose box is farther than the best so far is not looked at.
    edge_box: Vec<[f32; 4]>,
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
        let mut edge_box = Vec::with_capacity(g.edge_count());
        for e in 0..g.edge_count() {
            pts.clear();
            g.arc_geometry(2 * e as u32, &mut pts);
            let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
            for p in &pts {
                let (x, y) = proj(p[0], p[1]);
                let (x, y) = ((x - min_x) as f32, (y - min_y) as f32);
                b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
            }
            edge_box.push(b);
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
            edge_box,
        }
    }

    pub fn memory_bytes(&self) -> usize {
        4 * (self.cell_first.len() + self.cell_edges.len()) + 16 * self.edge_box.len()
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
        self.candidates(g, lon, lat, max_m, bearing, usable, 0.0, 1)
            .into_iter()
            .next()
    }

    /// The nearest position (as [`SnapIndex::snap`]) and, after it, up to `max_n - 1` positions on
    /// other edges no more than `slack_m` farther from the point, nearest first: the candidates of a
    /// waypoint between two carriageways, or between a road and its cycle track.
    #[allow(clippy::too_many_arguments)]
    pub fn candidates(
        &self,
        g: &CityGraph,
        lon: f64,
        lat: f64,
        max_m: f64,
        bearing: Option<(f64, f64, f64)>,
        usable: impl Fn(EdgeId) -> (bool, bool),
        slack_m: f64,
        max_n: usize,
    ) -> Vec<Snap> {
        let (px, py) = self.proj(lon, lat);
        let (cx, cy) = ((px - self.min_x) / CELL_M, (py - self.min_y) / CELL_M);
        let (bx, by) = ((px - self.min_x) as f32, (py - self.min_y) as f32);
        let limit = match bearing {
            Some((_, _, radius)) => radius.min(max_m),
            None => max_m,
        };
        let max_ring = (limit / CELL_M).ceil() as i64 + 1;
        // How far the point lies inside its own cell: the rings searched so far cover at least this
        // much (plus a cell per ring) around it.
        let (fx, fy) = (cx - cx.floor(), cy - cy.floor());
        let inner = fx.min(1.0 - fx).min(fy).min(1.0 - fy) * CELL_M;
        let (ci, ri) = (cx.floor() as i64, cy.floor() as i64);
        let mut best: Option<Snap> = None;
        let mut found: Vec<Snap> = Vec::new();
        let mut seen: HashSet<EdgeId, IdHash> =
            HashSet::with_capacity_and_hasher(256, Default::default());
        let mut pts = Vec::with_capacity(32);
        for ring in 0..=max_ring {
            // Nothing outside the rings searched can beat a best that lies within them.
            if let Some(b) = &best
                && ring > 0
                && b.distance_m + slack_m <= inner + (ring - 1) as f64 * CELL_M
            {
                break;
            }
            for dy in -ring..=ring {
                for dx in -ring..=ring {
                    if dx.abs() != ring && dy.abs() != ring {
                        continue;
                    }
                    let (c, r) = (ci + dx, ri + dy);
                    if c < 0 || r < 0 || c >= self.cols as i64 || r >= self.rows as i64 {
                        continue;
                    }
                    let cell = r as usize * self.cols + c as usize;
                    for &e in &self.cell_edges
                        [self.cell_first[cell] as usize..self.cell_first[cell + 1] as usize]
                    {
                        // The edge's box is a bound on its distance: skip what cannot win.
                        let [x0, y0, x1, y1] = self.edge_box[e as usize];
                        let (ox, oy) = (
                            (x0 - bx).max(bx - x1).max(0.0),
                            (y0 - by).max(by - y1).max(0.0),
                        );
                        let bound = ((ox * ox + oy * oy).sqrt() - 0.01) as f64;
                        if bound > limit
                            || best
                                .as_ref()
                                .is_some_and(|b| bound >= b.distance_m + slack_m)
                        {
                            continue;
                        }
                        if !seen.insert(e) {
                            continue;
                        }
                        let (mut fwd, mut bwd) = usable(e);
                        if !fwd && !bwd {
                            continue;
                        }
                        pts.clear();
                        g.arc_geometry(2 * e, &mut pts);
                        let Some((d, t, qlon, qlat, seg)) = self.project(&pts, px, py) else {
                            continue;
                        };
                        if d > limit || best.as_ref().is_some_and(|b| d >= b.distance_m + slack_m) {
                            continue;
                        }
                        let seg_bearing = bearing_deg(
                            LonLat::new(pts[seg][0], pts[seg][1]),
                            LonLat::new(pts[seg + 1][0], pts[seg + 1][1]),
                        );
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
                        let snap = Snap {
                            edge: e,
                            t,
                            lon: qlon,
                            lat: qlat,
                            distance_m: d,
                            forward: fwd,
                            backward: bwd,
                            heading_deg: seg_bearing,
                        };
                        if best.as_ref().is_none_or(|b| d < b.distance_m) {
                            best = Some(snap);
                        }
                        if slack_m > 0.0 {
                            found.push(snap);
                        }
                    }
                }
            }
        }
        let Some(best) = best else {
            return Vec::new();
        };
        found.retain(|c| c.edge != best.edge && c.distance_m <= best.distance_m + slack_m);
        found.sort_by(|a, b| a.distance_m.total_cmp(&b.distance_m));
        found.truncate(max_n.saturating_sub(1));
        found.insert(0, best);
        found
    }

    /// Nearest point of a polyline: (distance m, fraction by length, lon, lat, index of the segment).
    fn project(&self, pts: &[[f64; 2]], px: f64, py: f64) -> Option<(f64, f64, f64, f64, usize)> {
        let mut total = 0.0;
        let mut best: Option<(f64, f64, f64, f64, usize)> = None; // d, along, x, y, segment
        for (i, s) in pts.windows(2).enumerate() {
            let (x0, y0) = self.proj(s[0][0], s[0][1]);
            let (x1, y1) = self.proj(s[1][0], s[1][1]);
            let (dx, dy) = (x1 - x0, y1 - y0);
            let len2 = dx * dx + dy * dy;
            let len = len2.sqrt();
            let u = if len2 > 0.0 {
                (((px - x0) * dx + (py - y0) * dy) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (qx, qy) = (x0 + u * dx, y0 + u * dy);
            let d2 = (px - qx).powi(2) + (py - qy).powi(2);
            if best.is_none_or(|b| d2 < b.0) {
                best = Some((d2, total + u * len, qx, qy, i));
            }
            total += len;
        }
        best.map(|(d2, along, x, y, i)| {
            (
                d2.sqrt(),
                if total > 0.0 { along / total } else { 0.0 },
                x / self.m_per_deg_lon,
                y / M_PER_DEG_LAT,
                i,
            )
        })
    }
}
