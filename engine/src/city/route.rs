//! Routing in a city: snapping waypoints (with candidates beside the nearest road at a trip's ends),
//! legs on the turn model, SuperSafe's bounded detour, and one-to-many.

use super::*;
use crate::graph::BikeAccess;
use crate::metric::LegCost;

/// Whether a bicycle may ride arc `a` (not only push it).
fn ridden_arc(g: &CityGraph, a: ArcId) -> bool {
    g.arc_attrs[a as usize].bike() == BikeAccess::Ride
}

/// How far past a crossover [`City::gains_ground_across`] looks.
const GROUND_AHEAD_M: f64 = 30.0;

impl City {
    /// Snaps a point for a metric; `bearing` restricts direction (first waypoint only).
    pub fn snap(
        &self,
        lon: f64,
        lat: f64,
        kind: MetricKind,
        metric: &CityMetric,
        bearing: Option<f64>,
    ) -> Option<Snap> {
        self.snap_candidates(lon, lat, kind, metric, bearing, 0.0)
            .into_iter()
            .next()
    }

    /// The nearest snap and the positions on other edges within `slack_m` more of the point (see
    /// [`SnapIndex::candidates`]), on the well-connected network when it has any within reach.
    pub fn snap_candidates(
        &self,
        lon: f64,
        lat: f64,
        kind: MetricKind,
        metric: &CityMetric,
        bearing: Option<f64>,
        slack_m: f64,
    ) -> Vec<Snap> {
        let w = &metric.arc_weights;
        let connected = &self.well_connected[usize::from(kind == MetricKind::Walking)];
        let bearing = bearing.map(|b| (b, BEARING_TOLERANCE_DEG, BEARING_RADIUS_M));
        let g = &self.graph;
        let cycling = kind.is_cycling();
        let usable = |e: u32| {
            // A crossing is walked across on the way; a ride does not start or end on one.
            if cycling
                && g.way_flags[g.arc_way(2 * e) as usize] & crate::graph::way_flags::CROSSING != 0
            {
                return (false, false);
            }
            (
                w[2 * e as usize] < INF_WEIGHT,
                w[2 * e as usize + 1] < INF_WEIGHT,
            )
        };
        // Searched wider than `slack_m` for the other side of the same road (below); enough
        // candidates are kept for the filter to leave SNAP_CANDIDATES.
        let (search_slack, n) = if slack_m > 0.0 {
            (slack_m.max(SAME_ROAD_SLACK_M), 3 * SNAP_CANDIDATES)
        } else {
            (0.0, 1)
        };
        let search = |usable: &dyn Fn(u32) -> (bool, bool)| {
            self.snap_index.candidates(
                &self.graph,
                lon,
                lat,
                MAX_SNAP_M,
                bearing,
                usable,
                search_slack,
                n,
            )
        };
        let on_connected = search(&|e| {
            if connected[e as usize] {
                usable(e)
            } else {
                (false, false)
            }
        });
        let on_connected_any = !on_connected.is_empty();
        let mut found = if on_connected.is_empty() {
            search(&usable)
        } else {
            on_connected
        };
        // Another candidate must run alongside the nearest (the other carriageway, a cycle track
        // beside the road), not meet it: a road that joins the nearest one at a node is reached
        // through that junction, as riders do. It lies within `slack_m` more of the point, or
        // within SAME_ROAD_SLACK_M more where it is the same road (the far carriageway or cycle
        // lane of the street the point is on: a rider crosses the street to it rather than ride
        // off the wrong way and turn back).
        if let Some(&first) = found.first() {
            let g = &self.graph;
            let ends = |e: u32| [g.arc_tail(2 * e), g.arc_head(2 * e)];
            let name = |e: u32| g.string(g.routing_name(2 * e));
            let fe = ends(first.edge);
            // One candidate per way, the nearest: farther pieces of a way are reached along it.
            let mut ways = Vec::with_capacity(found.len());
            found.retain(|c| {
                if c.edge == first.edge {
                    ways.push(g.arc_way(2 * c.edge));
                    return true;
                }
                let way = g.arc_way(2 * c.edge);
                if ways.contains(&way) {
                    return false;
                }
                let d = (c.heading_deg - first.heading_deg).rem_euclid(180.0);
                let parallel = d.min(180.0 - d) <= ALONGSIDE_DEG;
                let extra = c.distance_m - first.distance_m;
                let near = extra <= slack_m
                    || (extra <= SAME_ROAD_SLACK_M && same_road(name(c.edge), name(first.edge)));
                let keep = near && parallel && !ends(c.edge).iter().any(|v| fe.contains(v));
                if keep {
                    ways.push(way);
                }
                keep
            });
            found.truncate(SNAP_CANDIDATES);
        }
        // A trip's end whose nearest way can only be pushed (a footway across a park or a plaza, a
        // sidewalk) is also offered the nearest way it can ride within RIDE_SLACK_M more of the
        // point: a rider walks the few metres to the path and rides off, rather than push along
        // the footway to it. The metres walked to it are priced at the footway's own rate
        // (`City::leg_between`), so the search takes it only where it saves pushing.
        if cycling && slack_m > 0.0 {
            let ridden = |e: u32| {
                let (f, b) = usable(e);
                (f && ridden_arc(g, 2 * e), b && ridden_arc(g, 2 * e + 1))
            };
            if let Some(first) = found.first().copied()
                && ridden(first.edge) == (false, false)
            {
                let near = self.snap_index.candidates(
                    g,
                    lon,
                    lat,
                    // At most three times as far as the footway and SNAP_SLACK_M more: a point on
                    // the footway itself is a place on it, not beside it.
                    first.distance_m + RIDE_SLACK_M.min(2.0 * first.distance_m + SNAP_SLACK_M),
                    bearing,
                    |e| {
                        // On the well-connected network where the nearest was found on it.
                        if connected[e as usize] || !on_connected_any {
                            ridden(e)
                        } else {
                            (false, false)
                        }
                    },
                    SAME_ROAD_SLACK_M,
                    3 * SNAP_CANDIDATES,
                );
                // With the other side of the same way or road (a path's two one-way halves), as
                // for the nearest: a rider crosses to it rather than ride past and turn back.
                if let Some(&c) = near.first() {
                    let name = |e: u32| g.string(g.routing_name(2 * e));
                    let mut ride = vec![c];
                    for &o in &near[1..] {
                        let d = (o.heading_deg - c.heading_deg).rem_euclid(180.0);
                        if o.edge != c.edge
                            && g.arc_way(2 * o.edge) != g.arc_way(2 * c.edge)
                            && d.min(180.0 - d) <= ALONGSIDE_DEG
                            && o.distance_m - c.distance_m <= SAME_ROAD_SLACK_M
                            && same_road(name(o.edge), name(c.edge))
                        {
                            ride.push(o);
                            break;
                        }
                    }
                    ride.retain(|r| !found.iter().any(|f| f.edge == r.edge));
                    found.truncate(SNAP_CANDIDATES - ride.len());
                    found.extend(ride);
                }
            }
        }
        found
    }

    /// Runs `f` with a query of the pool. The pool makes at most one query per core (a query's
    /// labels are 20 bytes a routing node, 37 MB on the 4 × 4 tiling of New York): a route asked
    /// for while every query is in use waits for one, where the addon's four worker threads on
    /// two cores made four, for no more routes a second.
    pub(super) fn with_query<T>(&self, f: impl FnOnce(&mut CchQuery) -> T) -> T {
        let q = {
            let mut pool = self.queries.lock().unwrap();
            loop {
                if let Some(q) = pool.free.pop() {
                    break q;
                }
                if pool.made < query_limit() {
                    pool.made += 1;
                    break CchQuery::new(&self.cch);
                }
                pool = self.query_returned.wait(pool).unwrap();
            }
        };
        // Given back on the way out, a panic's too (a query is reset before each use).
        struct Back<'a> {
            city: &'a City,
            q: Option<CchQuery>,
        }
        impl Drop for Back<'_> {
            fn drop(&mut self) {
                if let Some(q) = self.q.take() {
                    if let Ok(mut pool) = self.city.queries.lock() {
                        pool.free.push(q);
                    }
                    self.city.query_returned.notify_one();
                }
            }
        }
        let mut back = Back {
            city: self,
            q: Some(q),
        };
        f(back.q.as_mut().expect("the query, until dropped"))
    }

    /// Plans a route; `Ok(None)` when no route exists (a waypoint cannot be snapped or a leg has no path).
    pub fn route(&self, req: &RouteRequest) -> Result<Option<Route>, RouteError> {
        if !(2..=25).contains(&req.waypoints.len()) {
            return Err(RouteError::InvalidRequest(
                "between 2 and 25 waypoints are required".into(),
            ));
        }
        for p in &req.waypoints {
            if !(-180.0..=180.0).contains(&p[0]) || !(-90.0..=90.0).contains(&p[1]) {
                return Err(RouteError::InvalidRequest(
                    "coordinates must be [longitude, latitude] in range".into(),
                ));
            }
        }
        let kind = match req.profile {
            Profile::Walking => MetricKind::Walking,
            Profile::Cycling => MetricKind::cycling(req.supersafe, req.night),
        };
        let metric = self.metric(
            kind,
            if kind.is_cycling() {
                req.departure
            } else {
                None
            },
        );
        self.note_use(&metric);
        // The trip's two ends may start or end on any road within a few metres more than the
        // nearest (the other carriageway of a divided road, the cycle track beside it); a via point
        // keeps one position, so that the legs it joins meet.
        let last = req.waypoints.len() - 1;
        let mut cands: Vec<Vec<Snap>> = Vec::with_capacity(req.waypoints.len());
        for (i, p) in req.waypoints.iter().enumerate() {
            let bearing = if i == 0 && req.profile == Profile::Cycling {
                req.bearing
            } else {
                None
            };
            let slack = if i == 0 || i == last {
                SNAP_SLACK_M
            } else {
                0.0
            };
            let c = self.snap_candidates(p[0], p[1], kind, &metric, bearing, slack);
            if c.is_empty() {
                return Ok(None);
            }
            cands.push(c);
        }
        // SuperSafe with a bounded detour: each leg also asks Direct and, when the full weighting's
        // detour is over budget, the gentler one (see `DetourBudget`), taken only then (a metric
        // not built yet is built on first use).
        let bounded = (kind.is_cycling() && req.supersafe).then(|| {
            let direct = self.metric(kind.direct(), req.departure);
            self.note_use(&direct);
            direct
        });
        let gentle = || {
            let gentle = self.metric(kind.gentle(), req.departure);
            self.note_use(&gentle);
            gentle
        };
        let budget = bounded
            .is_some()
            .then(|| self.model().supersafe_detour.clone());
        let mut legs = Vec::with_capacity(last);
        let mut snaps: Vec<Snap> = cands.iter().map(|c| c[0]).collect();
        for (k, pair) in cands.windows(2).enumerate() {
            let (a, b) = (&pair[0], &pair[1]);
            let leg = self.with_query(|q| {
                // The leg chosen (with its metric), with its turn-backs priced away; a leg whose
                // pricing takes it over the detour budget gives way to the next choice.
                let full = self.leg_between(q, &metric, a, b)?;
                let (Some(direct), Some(budget)) = (&bounded, &budget) else {
                    return Some(self.without_turn_backs(q, &metric, kind, a, b, full));
                };
                let Some(shortest) = self.leg_between(q, direct, a, b) else {
                    return Some(self.without_turn_backs(q, &metric, kind, a, b, full));
                };
                let direct_cost = self.leg_cost(&shortest.0);
                if budget.within(self.leg_cost(&full.0), direct_cost) {
                    let priced = self.without_turn_backs(q, &metric, kind, a, b, full);
                    if budget.within(self.leg_cost(&priced.0), direct_cost) {
                        return Some(priced);
                    }
                }
                let gentle = gentle();
                if let Some(g) = self.leg_between(q, &gentle, a, b)
                    && budget.within_max(self.leg_cost(&g.0), direct_cost)
                {
                    let priced = self.without_turn_backs(q, &gentle, kind.gentle(), a, b, g);
                    if budget.within_max(self.leg_cost(&priced.0), direct_cost) {
                        return Some(priced);
                    }
                }
                Some(self.without_turn_backs(q, direct, kind.direct(), a, b, shortest))
            });
            match leg {
                Some((leg, i, j)) => {
                    snaps[k] = pair[0][i];
                    snaps[k + 1] = pair[1][j];
                    legs.push(leg);
                }
                None => return Ok(None),
            }
        }
        Ok(Some(Route {
            legs,
            waypoints: snaps,
            metric: kind,
        }))
    }

    /// A leg found by [`City::leg_between`] on `metric`, with, on a cycling metric, the turn-backs
    /// it rides (see [`City::turn_backs`]) priced and the leg searched again, up to eight times.
    /// Pricing a turn pair needs the turn before it, which the turn model has not (copies of every
    /// crossover would multiply the hierarchy), so it is done here, for the few legs that need it:
    /// the turn into each crossover found, the other ways to turn back from that carriageway, and
    /// the turn by which the leg came onto it cost `turn_back_seconds` more in a copy of the metric
    /// (copy-on-write, a partial customization of a few turns), four times as much once taken
    /// again. A crossover that also leads elsewhere (a left turn into the cross street) is priced
    /// only for this leg. When pricing cannot remove every turn-back (no other way), the leg with
    /// the fewest stands.
    pub fn without_turn_backs(
        &self,
        q: &mut CchQuery,
        metric: &Arc<CityMetric>,
        kind: MetricKind,
        a: &[Snap],
        b: &[Snap],
        first: (Leg, usize, usize),
    ) -> (Leg, usize, usize) {
        // A junction offers several ways to turn back (a crossing, the cross street, a crosswalk
        // the other way); each round prices the ones the last search found. A turn-back the
        // search takes again with its price paid (every other way turns back too, or is dearer
        // by less than the price) costs `ESCALATED` times as much in the next round: a U-turn
        // mid-route is the last resort, not a saving of a few seconds. (Not more: at 16 times,
        // SuperSafe rode a very busy carriageway rather than cross a junction to the cycle
        // track the other way.)
        const MAX_ROUNDS: u32 = 8;
        const ESCALATED: Weight = 4;
        if !kind.is_cycling() {
            return first;
        }
        let mut found = self.turn_backs(&first.0);
        if found.is_empty() {
            return first;
        }
        let extra = self.model().turn_back_weight(kind);
        // The leg the last search found.
        let mut last = first.0.pieces.clone();
        // The leg with the fewest turn-backs so far.
        let mut best = (found.len(), first);
        // Each turn pair priced, with its multiple of `extra`.
        let mut priced: Vec<((ArcId, ArcId), Weight)> = Vec::new();
        for round in 1..=MAX_ROUNDS {
            // For each turn-back: the turn into the crossover, and the turn by which the leg came
            // onto that carriageway (the way in that heads the wrong way, so that the next search
            // does not just turn back at the next gap in the median).
            let mut wanted: Vec<((ArcId, ArcId), bool)> = Vec::new();
            for &(from, into) in &found {
                wanted.push(((from, into), true));
                if let Some(entry) = self.road_entry(&last, from) {
                    wanted.push((entry, false));
                }
            }
            // A pair that is both keeps its crossover role.
            wanted.sort_unstable_by_key(|&(p, crossover)| (p, !crossover));
            wanted.dedup_by_key(|w| w.0);
            let mut changed = false;
            for (pair, crossover) in wanted {
                match priced.iter_mut().find(|(p, _)| *p == pair) {
                    Some((_, level)) => {
                        if *level < ESCALATED {
                            *level = ESCALATED;
                            changed = true;
                        }
                    }
                    None => {
                        priced.push((pair, 1));
                        changed = true;
                        if crossover {
                            // Every way to turn back from the same carriageway at once (the
                            // cross street, a crossing, a crosswalk the other way), so that a
                            // junction rarely takes a second round.
                            for more in self.turn_back_entries_from(pair.0) {
                                if !priced.iter().any(|(p, _)| *p == (pair.0, more)) {
                                    priced.push(((pair.0, more), 1));
                                }
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
            let next = self.turn_backs_priced_metric(metric, &priced, extra);
            let Some((mut leg, i, j)) = self.leg_between(q, &next, a, b) else {
                break;
            };
            leg.turn_backs_priced = round;
            found = self.turn_backs(&leg);
            let left = found.len();
            last.clone_from(&leg.pieces);
            if left < best.0 {
                best = (left, (leg, i, j));
                if left == 0 {
                    break;
                }
            }
        }
        best.1
    }

    /// The turn by which a leg came onto the named road it rides on arc `a`: the turn from the
    /// last arc of another name before the stretch of `a`'s name that `a` ends. `None` when the leg
    /// starts on that road, or `a` has no name.
    fn road_entry(&self, pieces: &[ArcPiece], a: ArcId) -> Option<(ArcId, ArcId)> {
        let g = &self.graph;
        let name = |x: ArcId| g.routing_name(x);
        let n = name(a);
        let mut k = pieces.iter().position(|p| p.arc == a)?;
        if n == 0 {
            return None;
        }
        while k > 0 && name(pieces[k - 1].arc) == n {
            k -= 1;
        }
        (k > 0).then(|| (pieces[k - 1].arc, pieces[k].arc))
    }

    /// `metric` with the turns from each `(from, into)` pair's first arc into its second costing
    /// `extra` more: a copy-on-write copy partially customized, kept in a small cache (keyed by
    /// the base metric and the turns), as the same junctions come up again and again.
    fn turn_backs_priced_metric(
        &self,
        metric: &Arc<CityMetric>,
        pairs: &[((ArcId, ArcId), Weight)],
        extra: Weight,
    ) -> Arc<CityMetric> {
        let mut updates: Vec<(ArcId, Weight)> = Vec::new();
        for &((from, into), level) in pairs {
            let extra = extra.saturating_mul(level);
            for x in self.turns.nodes_of_arc(from) {
                for t in self.turns.turns_out_of(x) {
                    let to = self.turns.node_arc[self.turns.turn_to[t as usize] as usize];
                    let w = metric.input_weights[t as usize];
                    if to == into && w < INF_WEIGHT {
                        updates.push((t, add(w, extra)));
                    }
                }
            }
        }
        // A turn priced twice (two pairs share it) keeps the dearer price.
        updates.sort_unstable_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
        updates.dedup_by_key(|u| u.0);
        let key = updates.clone();
        let base_id = Arc::as_ptr(metric) as usize;
        {
            let cache = self.turn_back_cache.lock().unwrap();
            if let Some((_, _, m)) = cache.iter().find(|(base, k, _)| {
                k == &key
                    && base
                        .upgrade()
                        .is_some_and(|b| Arc::as_ptr(&b) as usize == base_id)
            }) {
                return m.clone();
            }
        }
        let mut hierarchy = metric.hierarchy.clone();
        metric.cch.update(&mut hierarchy, &updates);
        let m = Arc::new(CityMetric {
            arc_weights: metric.arc_weights.clone(),
            hierarchy,
            cch: metric.cch.clone(),
            on_junctions: false,
        });
        let mut cache = self.turn_back_cache.lock().unwrap();
        // Oldest first out; entries whose base metric is gone go too.
        cache.retain(|(base, _, _)| base.strong_count() > 0);
        if cache.len() >= TURN_BACK_CACHE {
            cache.remove(0);
        }
        cache.push((Arc::downgrade(metric), key, m.clone()));
        m
    }

    /// The arcs by which a rider on arc `a` can enter a crossover that leads back along a road of
    /// `a`'s name (up to `CROSSOVER_MAX_ARCS` arcs and `CROSSOVER_MAX_M` metres, heading back more
    /// than 135°), whatever else the crossover reaches.
    fn turn_back_entries_from(&self, a: ArcId) -> Vec<ArcId> {
        use crate::graph::turns::{TURN_BACK_RIDDEN_DEG, crossover_exits};
        let t = &self.turns;
        // The arcs a turn out of an arc (its own routing node) leads to.
        let next = |x: ArcId| {
            t.turns_out_of(x)
                .map(|k| t.node_arc[t.turn_to[k as usize] as usize])
        };
        next(a)
            .filter(|&c| {
                matches!(
                    crossover_exits(&self.graph, a, c, next, TURN_BACK_RIDDEN_DEG),
                    Some((true, _))
                )
            })
            .collect()
    }

    /// The turn-backs a leg rides: an arc of a named road, then a crossover of up to
    /// `CROSSOVER_MAX_ARCS` pieces and `CROSSOVER_MAX_M` metres (of another name, or a junction's
    /// connecting way of the same name), then an arc of another way of the same name heading back
    /// (more than 135° from the first); or a U-turn at the dead end of a spur ridden into
    /// mid-route. Returns for each the turn to price: (the arc before, the first arc of the
    /// crossover or spur), or through a crossover of the same name (the arc before the turn back,
    /// the arc heading back).
    pub fn turn_backs(&self, leg: &Leg) -> Vec<(ArcId, ArcId)> {
        use crate::graph::turns::{
            CROSSOVER_MAX_ARCS, CROSSOVER_MAX_M, TURN_BACK_RIDDEN_DEG, turn_angle,
        };
        let g = &self.graph;
        let name = |a: ArcId| g.routing_name(a);
        let p = &leg.pieces;
        let mut out = Vec::new();
        // Turning back at the end of a spur mid-route (a dead end is the one place a U-turn is
        // allowed, so a short one can stand in for a turn the junction prices or forbids).
        for k in 1..p.len().saturating_sub(1) {
            if p[k + 1].arc == p[k].arc ^ 1 {
                out.push((p[k - 1].arc, p[k].arc));
            }
        }
        // Back along the road through a crossover: of another name, or of the same name when it
        // is another way than the first (a junction's connecting piece; a bend of one way is not
        // a turn-back).
        let mut i = 0;
        while i < p.len() {
            let a = p[i].arc;
            let n = name(a);
            let mut next = i + 1;
            if n != 0 {
                let mut len = 0.0f32;
                for (k, piece) in p.iter().enumerate().skip(i + 1) {
                    let b = piece.arc;
                    if name(b) == n && g.arc_way(b) != g.arc_way(a) {
                        // Through a crossover of the road's own name it is a turn-back only when
                        // the road is left heading the other way (as the guidance words a U-turn,
                        // from the road's heading before to its heading after), and the turn
                        // priced is the one that turns back: the turns before it run along the
                        // road, which every route along it takes.
                        // (A turn straight from one way of the name onto another heading back,
                        // two one-way paths meeting in a V, is one of these too.)
                        let own = p[i + 1..k].iter().all(|x| name(x.arc) == n);
                        let back = if own {
                            let d = (g.arc_bearing_end(b) as i32 - g.arc_bearing_start(a) as i32)
                                .rem_euclid(360);
                            // A U-turn at the junction itself (a hairpin) is one wherever the
                            // rider is; heading back by the far ends only when the leg loses the
                            // ground it had gained (not a jog between parallel ways).
                            self.reverses_at(p[k - 1].arc, b)
                                || ((d - 180).abs()
                                    < 180 - crate::guidance::passes::UTURN_DEG as i32
                                    && !self.gains_ground_across(p, i, k))
                        } else {
                            turn_angle(g, a, b).abs() > TURN_BACK_RIDDEN_DEG
                        };
                        if back {
                            out.push(if own {
                                (p[k - 1].arc, b)
                            } else {
                                (a, p[i + 1].arc)
                            });
                            next = k;
                            break;
                        }
                    }
                    if name(b) == n && name(p[k - 1].arc) != n {
                        // Back on the road without turning back.
                        break;
                    }
                    len += g.arc_length_m(b) * (piece.to - piece.from) as f32;
                    // Pieces ridden are split finer than a crossover's arcs (at every crossing
                    // and path that meets them): up to twice as many.
                    if len > CROSSOVER_MAX_M || k - i > 2 * CROSSOVER_MAX_ARCS {
                        break;
                    }
                }
            }
            i = next;
        }
        // A spur can also be a crossover's: each turn-back once.
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether a leg still gains ground in the direction it had before piece `i` once it is past
    /// piece `k`'s start: the point [`GROUND_AHEAD_M`] after `k`'s start lies ahead of `i`'s start,
    /// seen along the heading arriving at `i` (over 15 m, as the guidance reads it). A turn-back
    /// across a crossover brings the rider back behind where it began. A jog of the road's own
    /// name between two parallel ways ridden the same way does not, even where the first and last
    /// arcs of the jog point opposite ways: on the Chicago Riverwalk, north 17 m up to the upper
    /// path, west 37 m along it, south 5 m back down, then on west (14 m ahead). Taken for a
    /// turn-back, pricing it sent the route through a 4 m dead-end spur instead: a real U-turn.
    fn gains_ground_across(&self, p: &[ArcPiece], i: usize, k: usize) -> bool {
        use crate::guidance::geometry::{HEADING_SPAN_M, Plane};
        let g = &self.graph;
        let mut shape = Vec::new();
        // The heading arriving at i: over the last 15 m of the arcs before it.
        let mut before: Vec<[f64; 2]> = Vec::new();
        let mut m = 0.0;
        for piece in p[..i].iter().rev() {
            shape.clear();
            g.arc_geometry(piece.arc, &mut shape);
            before.splice(0..0, shape.iter().copied());
            m += g.arc_length_m(piece.arc) as f64;
            if m >= HEADING_SPAN_M {
                break;
            }
        }
        if before.is_empty() {
            return false;
        }
        let start = g.node_lon_lat(g.arc_tail(p[i].arc));
        let plane = Plane::at(start[1]);
        let heading = plane.end_bearing(&before).to_radians();
        // The point GROUND_AHEAD_M along the leg from k's start.
        let mut after: Vec<[f64; 2]> = Vec::new();
        m = 0.0;
        for piece in &p[k..] {
            g.arc_geometry(piece.arc, &mut after);
            m += g.arc_length_m(piece.arc) as f64;
            if m >= GROUND_AHEAD_M {
                break;
            }
        }
        let Some((&first, rest)) = after.split_first() else {
            return false;
        };
        let far = plane.point_along(first, rest.iter().copied(), GROUND_AHEAD_M);
        let (east, north) = plane.delta(start, far);
        east * heading.sin() + north * heading.cos() > 0.0
    }

    /// Whether riding from arc `a` onto arc `b` (which starts where `a` ends) turns back at their
    /// junction as the guidance reads it: headings over 15 m of road on each side, more than
    /// [`crate::guidance::passes::UTURN_DEG`] apart. A connecting piece of a path ridden one way
    /// and then left for the parallel path the other way is a U-turn there, even where the pieces'
    /// far ends, which the turn-back test compares first, bend it under the threshold.
    fn reverses_at(&self, a: ArcId, b: ArcId) -> bool {
        use crate::guidance::geometry::Plane;
        let g = &self.graph;
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        g.arc_geometry(a, &mut pa);
        g.arc_geometry(b, &mut pb);
        let Some(&at) = pb.first() else { return false };
        let plane = Plane::at(at[1]);
        let angle =
            crate::guidance::geometry::turn_angle(plane.end_bearing(&pa), plane.start_bearing(&pb));
        angle.abs() > crate::guidance::passes::UTURN_DEG
    }

    /// Metres ridden on a leg.
    /// A cycling leg's length, duration (ridden at the cycling speed, pushed at walking speed) and
    /// metres pushed, as SuperSafe's detour budget compares them with Direct's.
    pub fn leg_cost(&self, leg: &Leg) -> LegCost {
        let model = self.model();
        let (mut length_m, mut duration_s, mut pushed_m) = (0.0, 0.0, 0.0);
        for p in &leg.pieces {
            let frac = p.to - p.from;
            let m = self.graph.arc_length_m(p.arc) as f64 * frac;
            length_m += m;
            duration_s += model.duration_s(&self.graph, p.arc, true, false) * frac;
            if self.graph.arc_attrs[p.arc as usize].bike() == crate::graph::BikeAccess::Push {
                pushed_m += m;
            }
        }
        LegCost {
            length_m,
            duration_s,
            pushed_m,
        }
    }

    pub fn leg_length_m(&self, leg: &Leg) -> f64 {
        leg.pieces
            .iter()
            .map(|p| self.graph.arc_length_m(p.arc) as f64 * (p.to - p.from))
            .sum()
    }

    /// One leg between two snapped positions, on the turn model: a routing node stands for a whole
    /// arc travelled, so a source seeds the arcs it starts on with the part still ahead, and a target
    /// takes back the part of its arc beyond the target point (from a common offset, as weights
    /// are unsigned). On a metric on junctions ([`CityMetric::on_junctions`]) a source seeds the
    /// junction ahead and a target is the junction its arc starts at, with the part up to the
    /// point.
    ///
    /// The start and end may each be several candidates (see
    /// [`City::snap_candidates`]): the search picks the pair, each candidate after the first paying
    /// for the metres it lies farther from the point than the first, at its own arc's rate. Returns
    /// the leg and the indices of the candidates it starts and ends at.
    pub fn leg_between(
        &self,
        q: &mut CchQuery,
        metric: &CityMetric,
        a: &[Snap],
        b: &[Snap],
    ) -> Option<(Leg, usize, usize)> {
        let aw = &metric.arc_weights;
        let g = &self.graph;
        let usable = |arc: ArcId| aw[arc as usize] < INF_WEIGHT;
        // The extra metres to a candidate beyond the nearest, priced as riding them on its arc; where
        // the nearest way can only be pushed, as pushing them at its rate, if dearer (the rider
        // walks to a way to ride, `City::snap_candidates`).
        let rate = |arc: ArcId| -> f64 {
            let len = g.arc_length_m(arc) as f64;
            if len <= 0.0 || !usable(arc) {
                0.0
            } else {
                aw[arc as usize] as f64 / len
            }
        };
        let extra = |c: &Snap, first: &Snap, arc: ArcId| -> Weight {
            let m = c.distance_m - first.distance_m;
            let mut per_m = rate(arc);
            if per_m == 0.0 {
                return 0;
            }
            let pushed_only = !ridden_arc(g, 2 * first.edge) && !ridden_arc(g, 2 * first.edge + 1);
            if pushed_only && c.edge != first.edge {
                per_m = per_m.max(rate(2 * first.edge).max(rate(2 * first.edge + 1)));
            }
            if m <= 0.0 {
                0
            } else {
                (per_m * m).round().min(INF_WEIGHT as f64 / 4.0) as Weight
            }
        };
        let mut starts: Vec<LegStart> = Vec::with_capacity(2 * a.len());
        for (i, c) in a.iter().enumerate() {
            for (arc, f, ok) in [
                (2 * c.edge, c.t, c.forward),
                (2 * c.edge + 1, 1.0 - c.t, c.backward),
            ] {
                starts.push((arc, f, ok, i, extra(c, &a[0], arc)));
            }
        }
        let mut ends: Vec<LegEnd> = Vec::with_capacity(2 * b.len());
        for (i, c) in b.iter().enumerate() {
            for (arc, f) in [(2 * c.edge, c.t), (2 * c.edge + 1, 1.0 - c.t)] {
                ends.push((arc, f, i, extra(c, &b[0], arc)));
            }
        }
        if metric.on_junctions {
            self.leg_on_junctions(q, metric, &starts, &ends)
        } else {
            self.leg_on_turns(q, metric, &starts, &ends)
        }
    }

    /// [`City::leg_between`] on the turn model.
    fn leg_on_turns(
        &self,
        q: &mut CchQuery,
        metric: &CityMetric,
        starts: &[LegStart],
        ends: &[LegEnd],
    ) -> Option<(Leg, usize, usize)> {
        let aw = &metric.arc_weights;
        let usable = |arc: ArcId| aw[arc as usize] < INF_WEIGHT;
        let offset = ends
            .iter()
            .filter(|e| usable(e.0))
            .map(|e| aw[e.0 as usize])
            .max()?;
        q.reset();
        for &(arc, f, _, x) in ends {
            if usable(arc) {
                let w = aw[arc as usize];
                let beyond = w - part(w, f);
                for n in self.turns.nodes_of_arc(arc) {
                    q.add_target(n, add(offset - beyond, x), &metric.cch);
                }
            }
        }
        let mut seeds: Vec<LegSeed> = Vec::with_capacity(2 * starts.len());
        for &(arc, f, ok, i, x) in starts {
            if !ok || !usable(arc) {
                continue;
            }
            let ahead = add(part(aw[arc as usize], 1.0 - f), x);
            if ends.iter().any(|e| e.0 == arc && e.1 < f) {
                // A target lies behind on this very arc: leave the arc by a turn first (seeding the
                // arc itself would meet that target at once, as if it lay ahead).
                for t in self.turns.turns_out_of(arc) {
                    let w = metric.input_weights[t as usize];
                    if w < INF_WEIGHT {
                        seeds.push((self.turns.turn_to[t as usize], add(ahead, w), arc, f, i, x));
                    }
                }
            }
            if ends.iter().all(|e| e.0 != arc || e.1 >= f) {
                seeds.push((arc, ahead, arc, f, i, x));
            }
        }
        let best = match search_leg(q, metric, &seeds, offset, starts, ends)? {
            Ok(best) => best,
            Err(direct) => return Some(direct),
        };
        let (src, tgt) = q.endpoints(&metric.cch)?;
        // The seed the search used at the path's first node: the cheapest one there.
        let &(_, _, first_arc, first_from, start_at, start_extra) =
            seeds.iter().filter(|s| s.0 == src).min_by_key(|s| s.1)?;
        let tgt_arc = self.turns.node_arc[tgt as usize];
        // The end on the target's arc the search reached: the cheapest with its extra.
        let &(_, end_f, end_at, end_extra) =
            ends.iter().filter(|e| e.0 == tgt_arc).min_by_key(|e| e.3)?;
        let path = q.arc_path(&metric.cch, &metric.hierarchy);
        let mut pieces = Vec::with_capacity(path.len() + 2);
        let node_arc = &self.turns.node_arc;
        if src == first_arc && path.is_empty() {
            // Started and ended on the same arc (a rounding away from the direct case above).
            pieces.push(ArcPiece {
                arc: first_arc,
                from: first_from,
                to: end_f,
            });
        } else {
            pieces.push(ArcPiece {
                arc: first_arc,
                from: first_from,
                to: 1.0,
            });
            let nodes = std::iter::once(src)
                .filter(|&x| x != first_arc)
                .chain(path.iter().map(|&t| self.turns.turn_to[t as usize]));
            let mut nodes = nodes.peekable();
            while let Some(x) = nodes.next() {
                let arc = node_arc[x as usize];
                let to = if nodes.peek().is_none() {
                    debug_assert_eq!(x, tgt);
                    end_f
                } else {
                    1.0
                };
                pieces.push(ArcPiece { arc, from: 0.0, to });
            }
        }
        let leg = searched_leg(pieces, best, add(start_extra, end_extra));
        Some((leg, start_at, end_at))
    }

    /// [`City::leg_between`] on junctions: the path's input arcs are the graph's arcs, between the
    /// part of the arc started on ahead of the start and the part of the arc ended on up to the end.
    fn leg_on_junctions(
        &self,
        q: &mut CchQuery,
        metric: &CityMetric,
        starts: &[LegStart],
        ends: &[LegEnd],
    ) -> Option<(Leg, usize, usize)> {
        let (aw, g) = (&metric.arc_weights, &self.graph);
        let usable = |arc: ArcId| aw[arc as usize] < INF_WEIGHT;
        // The weight of the part of an end's arc up to the end, with the end's extra.
        let up_to = |e: &LegEnd| add(part(aw[e.0 as usize], e.1), e.3);
        q.reset();
        for e in ends.iter().filter(|e| usable(e.0)) {
            q.add_target(g.arc_tail(e.0), up_to(e), &metric.cch);
        }
        let seeds: Vec<LegSeed> = starts
            .iter()
            .filter(|s| s.2 && usable(s.0))
            .map(|&(arc, f, _, i, x)| {
                let ahead = add(part(aw[arc as usize], 1.0 - f), x);
                (g.arc_head(arc), ahead, arc, f, i, x)
            })
            .collect();
        let best = match search_leg(q, metric, &seeds, 0, starts, ends)? {
            Ok(best) => best,
            Err(direct) => return Some(direct),
        };
        let (src, tgt) = q.endpoints(&metric.cch)?;
        let &(_, _, first_arc, first_from, start_at, start_extra) =
            seeds.iter().filter(|s| s.0 == src).min_by_key(|s| s.1)?;
        let &(end_arc, end_f, end_at, end_extra) = ends
            .iter()
            .filter(|e| usable(e.0) && g.arc_tail(e.0) == tgt)
            .min_by_key(|e| up_to(e))?;
        let path = q.arc_path(&metric.cch, &metric.hierarchy);
        let mut pieces = Vec::with_capacity(path.len() + 2);
        pieces.push(ArcPiece {
            arc: first_arc,
            from: first_from,
            to: 1.0,
        });
        pieces.extend(path.iter().map(|&arc| ArcPiece {
            arc,
            from: 0.0,
            to: 1.0,
        }));
        pieces.push(ArcPiece {
            arc: end_arc,
            from: 0.0,
            to: end_f,
        });
        let leg = searched_leg(pieces, best, add(start_extra, end_extra));
        Some((leg, start_at, end_at))
    }

    /// From one point to the `k` nearest of `targets` by network cost (cycling or walking metric in
    /// force at `departure`), within `max_seconds` of penalised travel. Returns (target index, cost).
    pub fn one_to_many(
        &self,
        from: [f64; 2],
        targets: &[[f64; 2]],
        k: usize,
        kind: MetricKind,
        departure: Option<i64>,
        max_seconds: f64,
    ) -> Vec<(usize, Weight)> {
        let metric = self.metric(kind, departure);
        let w = &metric.arc_weights;
        let Some(src) = self.snap(from[0], from[1], kind, &metric, None) else {
            return vec![];
        };
        // Each target is reached at its edge's tail or head, then along the edge.
        let mut at_node: HashMap<NodeId, Vec<(usize, Weight)>> = HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            let Some(s) = self.snap(t[0], t[1], kind, &metric, None) else {
                continue;
            };
            let e = s.edge as usize;
            if w[2 * e] < INF_WEIGHT {
                at_node
                    .entry(self.graph.edge_tail[e])
                    .or_default()
                    .push((i, (w[2 * e] as f64 * s.t) as Weight));
            }
            if w[2 * e + 1] < INF_WEIGHT {
                at_node
                    .entry(self.graph.edge_head[e])
                    .or_default()
                    .push((i, (w[2 * e + 1] as f64 * (1.0 - s.t)) as Weight));
            }
        }
        let e = src.edge as usize;
        let mut seeds = Vec::new();
        if w[2 * e] < INF_WEIGHT {
            seeds.push((
                self.graph.edge_head[e],
                (w[2 * e] as f64 * (1.0 - src.t)) as Weight,
            ));
        }
        if w[2 * e + 1] < INF_WEIGHT {
            seeds.push((
                self.graph.edge_tail[e],
                (w[2 * e + 1] as f64 * src.t) as Weight,
            ));
        }
        let max = (max_seconds * crate::metric::WEIGHT_PER_SECOND) as Weight;
        let mut best: HashMap<usize, Weight> = HashMap::new();
        let mut d = self
            .dijkstras
            .lock()
            .unwrap()
            .pop()
            .unwrap_or_else(|| Dijkstra::new(self.graph.node_count()));
        d.run(&self.adjacency, w, &seeds, max, |v, dist| {
            if let Some(list) = at_node.get(&v) {
                for &(i, extra) in list {
                    let c = dist.saturating_add(extra);
                    let e = best.entry(i).or_insert(c);
                    *e = (*e).min(c);
                }
            }
            // Stop once k targets are known and no unsettled one can be nearer than the k-th.
            if best.len() >= k {
                let mut costs: Vec<Weight> = best.values().copied().collect();
                costs.sort_unstable();
                return costs[k - 1] <= dist;
            }
            false
        });
        self.dijkstras.lock().unwrap().push(d);
        let mut out: Vec<(usize, Weight)> = best.into_iter().filter(|&(_, c)| c <= max).collect();
        out.sort_by_key(|&(i, c)| (c, i));
        out.truncate(k);
        out
    }
}

/// A leg's possible start: (arc, fraction of it behind the point, usable from here, candidate,
/// extra).
type LegStart = (ArcId, f64, bool, usize, Weight);
/// A leg's possible end: (arc, fraction of it behind the point, candidate, extra).
type LegEnd = (ArcId, f64, usize, Weight);
/// A search's seed: (routing node or junction, distance, arc started on, fraction of it behind,
/// candidate, its extra).
type LegSeed = (u32, Weight, ArcId, f64, usize, Weight);

/// Runs a leg's search from `seeds` to the targets already added to `q`, and weighs it against a
/// start and end on one arc: `Err` with that leg when it costs no more, else `Ok` with the
/// search's distance less `offset`; `None` when neither reaches.
fn search_leg(
    q: &mut CchQuery,
    metric: &CityMetric,
    seeds: &[LegSeed],
    offset: Weight,
    starts: &[LegStart],
    ends: &[LegEnd],
) -> Option<Result<Weight, (Leg, usize, usize)>> {
    for s in seeds {
        q.add_source(s.0, s.1, &metric.cch);
    }
    q.run(&metric.cch, &metric.hierarchy);
    let found = q.distance();
    let best = if found < INF_WEIGHT {
        found.saturating_sub(offset)
    } else {
        INF_WEIGHT
    };
    if let Some(direct) = direct_leg(&metric.arc_weights, starts, ends, best) {
        return Some(Err(direct));
    }
    (best < INF_WEIGHT).then_some(Ok(best))
}

/// The part `frac` of a weight.
fn part(w: Weight, frac: f64) -> Weight {
    (w as f64 * frac.clamp(0.0, 1.0)).round() as Weight
}

/// A leg found by a search: its pieces (empty ones left out), weight and snapping extra.
fn searched_leg(mut pieces: Vec<ArcPiece>, weight: Weight, snap_extra: Weight) -> Leg {
    pieces.retain(|p| p.to > p.from);
    Leg {
        pieces,
        weight,
        snap_extra,
        turn_backs_priced: 0,
    }
}

/// A leg that starts and ends on the same arc, the end ahead, ridden directly, when it costs no
/// more than `best` (the search's): the leg and the candidates it starts and ends at.
fn direct_leg(
    aw: &CowVec<Weight>,
    starts: &[LegStart],
    ends: &[LegEnd],
    mut best: Weight,
) -> Option<(Leg, usize, usize)> {
    let mut direct = None;
    for &(arc, f, ok, i, xs) in starts {
        for &(e, ef, j, xe) in ends {
            if ok && e == arc && ef >= f && aw[arc as usize] < INF_WEIGHT {
                let d = add(add(part(aw[arc as usize], ef - f), xs), xe);
                if d <= best {
                    best = d;
                    let leg = Leg {
                        pieces: vec![ArcPiece {
                            arc,
                            from: f,
                            to: ef,
                        }],
                        weight: d,
                        snap_extra: add(xs, xe),
                        turn_backs_priced: 0,
                    };
                    direct = Some((leg, i, j));
                }
            }
        }
    }
    direct
}

/// Whether two way names belong to one road: equal, or sharing a word that is not a direction or
/// a kind of way ("Kinzie Street Bikeway" beside "West Kinzie Street"). Unnamed ways belong to none.
fn same_road(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    // Kinds of way; directions are the guidance's compass words.
    const KINDS: &[&str] = &[
        "street",
        "st",
        "avenue",
        "ave",
        "road",
        "rd",
        "drive",
        "dr",
        "boulevard",
        "blvd",
        "lane",
        "place",
        "way",
        "bikeway",
        "cycleway",
        "cycle",
        "track",
        "path",
        "greenway",
        "trail",
        "bike",
        "upper",
        "lower",
        "the",
        "of",
        "and",
        "service",
    ];
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase)
            .filter(|w| {
                w.len() >= 3
                    && !KINDS.contains(&w.as_str())
                    && !crate::guidance::COMPASS_WORDS.contains(&w.as_str())
            })
            .collect()
    };
    let wa = words(a);
    words(b).iter().any(|w| wa.contains(w))
}

#[cfg(test)]
mod tests {
    use super::same_road;

    #[test]
    fn a_cycle_track_named_after_its_street_is_the_same_road() {
        assert!(same_road("Pike Street", "Pike Street"));
        assert!(same_road("Kinzie Street Bikeway", "West Kinzie Street"));
        assert!(same_road("Hudson River Greenway", "Hudson River Greenway"));
        assert!(!same_road("West Street", "West Broadway"));
        assert!(!same_road("East 6th Street", "East 7th Street"));
        assert!(!same_road("", "Pike Street"));
        // Levels of a stacked road count as one road, as parallel roads within the plain slack do.
        assert!(same_road("Lower Wacker Drive", "Wacker Drive"));
    }
}
