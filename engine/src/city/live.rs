//! Live changes to a city's metrics: a new weighting model, permanent arc changes, turn bans and
//! avoidance windows, each partially re-customizing copies of the metrics and swapping them in, and
//! the metric in force for a departure time.

use super::*;

impl City {
    /// Replaces the weighting model: a full re-customization of every metric, swapped in at once.
    pub fn set_model(&self, model: WeightingModel) -> Result<(), String> {
        model.validate()?;
        let _writer = self.writer.lock().unwrap();
        let (changes, bans) = {
            let st = self.state.read().unwrap();
            (st.arc_changes.clone(), st.turn_bans.clone())
        };
        // The metrics built so far, again; the others stay to be built on first use.
        let built: Vec<MetricKind> = {
            let st = self.state.read().unwrap();
            MetricKind::ALL
                .into_iter()
                .filter(|&k| st.base[k as usize].is_some())
                .collect()
        };
        let base = customize_all(
            &self.graph,
            &self.turns,
            &self.cch,
            &model,
            &changes,
            &bans,
            &built,
        );
        let mut st = self.state.write().unwrap();
        st.model = Arc::new(model);
        st.base = base;
        st.cache.clear();
        Ok(())
    }

    /// Counts a query on a metric; the query that makes it a metric in steady use (base metrics after
    /// an update, avoidance metrics during their window) builds its pruned query graph on the
    /// thread pool, if the city's pruned graphs stay within its budget with it
    /// ([`City::set_query_graph_budget`]). Until then, and while that runs, queries use the full
    /// hierarchy, so a new metric is live at once and one used once or twice costs no pruning.
    pub(super) fn note_use(&self, m: &Arc<CityMetric>) {
        if m.pruned.get().is_some()
            || m.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed) != PRUNE_AFTER_USES
        {
            return;
        }
        let Some(reserved) = self.reserve_query_graph(m) else {
            return;
        };
        let (cch, m) = (m.cch.clone(), m.clone());
        rayon::spawn(move || {
            m.prepare_queries(&cch);
            drop(reserved);
        });
    }

    /// Room in the budget for `m`'s pruned graph (its estimate, held until the returned guard is
    /// dropped, once the graph is built and counted), or `None` if it does not fit beside the
    /// graphs built and those being built.
    fn reserve_query_graph(&self, m: &CityMetric) -> Option<Reservation> {
        use std::sync::atomic::Ordering::{AcqRel, Relaxed};
        let bytes = PRUNED_BYTES_PER_ARC * m.cch.arc_count();
        let reserved = self.pruning.fetch_add(bytes, AcqRel) + bytes;
        let guard = Reservation {
            pruning: self.pruning.clone(),
            bytes,
        };
        (reserved + self.pruned_graph_bytes() <= self.query_graph_budget.load(Relaxed))
            .then_some(guard)
    }

    /// Bytes held by the pruned query graphs of the cycling metrics (base and cached; walking's
    /// metric is its pruned graph alone, outside the budget).
    fn pruned_graph_bytes(&self) -> usize {
        let st = self.state.read().unwrap();
        st.base
            .iter()
            .flatten()
            .chain(st.cache.values())
            .filter(|m| !m.on_junctions)
            .filter_map(|m| m.pruned.get())
            .map(|p| p.memory_bytes())
            .sum()
    }

    /// The bytes the cycling metrics' pruned query graphs may hold together
    /// ([`DEFAULT_QUERY_GRAPH_BUDGET`] unless set): a metric in steady use is pruned only while
    /// they fit. 0 prunes none (least memory); `usize::MAX` prunes every metric in steady use
    /// (fastest queries). Graphs built already stay.
    pub fn set_query_graph_budget(&self, bytes: usize) {
        self.query_graph_budget
            .store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Builds every base metric not built yet and waits until each has its pruned query graph
    /// where the budget allows one (in [`MetricKind::ALL`]'s order), as once every metric is in
    /// steady use (benchmarks, tests; a test that needs every one pruned sets the budget first).
    pub fn prepare_base_metrics(&self) {
        for kind in MetricKind::ALL {
            let m = self.base_metric(kind);
            if m.on_junctions {
                // Walking's metric is its pruned graph (`CustomizedMetric::query_only`).
                m.prepare_queries(&m.cch);
            } else if let Some(_reserved) = self.reserve_query_graph(&m) {
                m.prepare_queries(&m.cch);
            }
        }
    }

    /// Builds the metrics a city builds once loaded ([`WARMED_METRICS`]: walking's), if no request
    /// has yet. Run in the background after a load: a request for one meanwhile waits for it.
    pub fn warm(&self) {
        for kind in WARMED_METRICS {
            self.base_metric(kind);
        }
    }

    /// Whether a base metric has been built (see [`LOADED_METRICS`]).
    pub fn is_built(&self, kind: MetricKind) -> bool {
        self.state.read().unwrap().base[kind as usize].is_some()
    }

    /// The base metric of a kind, customized now if this is its first use: with the model, arc
    /// changes and turn bans in force, under the writer lock so no update is lost meanwhile.
    /// Queries on other metrics go on; those asking for the same one wait for it.
    pub(super) fn base_metric(&self, kind: MetricKind) -> Arc<CityMetric> {
        if let Some(m) = &self.state.read().unwrap().base[kind as usize] {
            return m.clone();
        }
        if !kind.is_cycling() {
            return self.walking_metric();
        }
        let _writer = self.writer.lock().unwrap();
        let (model, changes, bans) = {
            let st = self.state.read().unwrap();
            if let Some(m) = &st.base[kind as usize] {
                return m.clone();
            }
            (
                st.model.clone(),
                st.arc_changes.clone(),
                st.turn_bans.clone(),
            )
        };
        let built = customize_all(
            &self.graph,
            &self.turns,
            &self.cch,
            &model,
            &changes,
            &bans,
            &[kind],
        );
        let m = built[kind as usize].clone().expect("built as asked");
        self.state.write().unwrap().base[kind as usize] = Some(m.clone());
        m
    }

    /// Walking's metric, built now if this is its first use. No live change touches it, so its
    /// build holds no writer lock (live changes go on meanwhile); it is kept if the model it was
    /// built with is still the city's, else built again.
    fn walking_metric(&self) -> Arc<CityMetric> {
        let _builder = self.walking_builder.lock().unwrap();
        loop {
            let model = {
                let st = self.state.read().unwrap();
                if let Some(m) = &st.base[MetricKind::Walking as usize] {
                    return m.clone();
                }
                st.model.clone()
            };
            let built = customize_all(
                &self.graph,
                &self.turns,
                &self.cch,
                &model,
                &Default::default(),
                &Default::default(),
                &[MetricKind::Walking],
            );
            let m = built[MetricKind::Walking as usize]
                .clone()
                .expect("built as asked");
            let mut st = self.state.write().unwrap();
            if let Some(m) = &st.base[MetricKind::Walking as usize] {
                return m.clone();
            }
            if Arc::ptr_eq(&st.model, &model) {
                st.base[MetricKind::Walking as usize] = Some(m.clone());
                return m;
            }
        }
    }

    /// Applies permanent changes to cycling arcs: each cycling base metric is copied, partially
    /// re-customized and swapped in; cached avoidance metrics are dropped.
    pub fn update_arcs(&self, changes: &[(ArcId, ArcChange)]) -> Result<(), String> {
        if let Some((a, _)) = changes
            .iter()
            .find(|(a, _)| *a as usize >= self.graph.arc_count())
        {
            return Err(format!("arc {a} does not exist"));
        }
        let _writer = self.writer.lock().unwrap();
        let (model, old_base, mut all_changes, bans) = {
            let st = self.state.read().unwrap();
            (
                st.model.clone(),
                st.base.clone(),
                st.arc_changes.clone(),
                st.turn_bans.clone(),
            )
        };
        for &(a, c) in changes {
            if c == ArcChange::Reset {
                all_changes.remove(&a);
            } else {
                all_changes.insert(a, c);
            }
        }
        // The cycling metrics built so far are independent: update copies of them in parallel (one
        // not built yet is built with every change in force on first use).
        use rayon::prelude::*;
        let updated: Vec<(MetricKind, Arc<CityMetric>)> = MetricKind::ALL
            .into_par_iter()
            .filter(|&k| k.is_cycling() && old_base[k as usize].is_some())
            .map(|kind| {
                let arc_updates: Vec<(ArcId, Weight)> = changes
                    .iter()
                    .map(|&(a, _)| {
                        (
                            a,
                            changed_weight(&self.graph, &model, kind, a, all_changes.get(&a)),
                        )
                    })
                    .collect();
                let m = self.updated_metric(
                    old_base[kind as usize].as_ref().expect("filtered"),
                    &model,
                    kind,
                    &arc_updates,
                    &[],
                    &bans,
                );
                (kind, Arc::new(m))
            })
            .collect();
        let mut new_base = old_base.clone();
        for (kind, m) in updated {
            new_base[kind as usize] = Some(m);
        }
        let mut st = self.state.write().unwrap();
        let old_base = std::mem::replace(&mut st.base, new_base);
        st.arc_changes = all_changes;
        let old_cache = std::mem::take(&mut st.cache);
        drop(st);
        // The metrics replaced are let go on the thread pool: a metric in steady use holds its
        // pruned query graph (about 200 MB on a whole city), whose pages going back to the system
        // the change need not wait for.
        rayon::spawn(move || drop((old_base, old_cache)));
        Ok(())
    }

    pub fn add_avoidance(&self, a: Avoidance) -> Result<(), String> {
        a.schedule.validate()?;
        if let Some(bad) = a
            .arcs
            .iter()
            .find(|&&x| x as usize >= self.graph.arc_count())
        {
            return Err(format!("arc {bad} does not exist"));
        }
        let mut st = self.state.write().unwrap();
        st.cache.retain(|(_, ids), _| !ids.contains(&a.id));
        st.avoidances.insert(a.id.clone(), a);
        Ok(())
    }

    pub fn remove_avoidance(&self, id: &str) -> bool {
        let mut st = self.state.write().unwrap();
        st.cache.retain(|(_, ids), _| !ids.iter().any(|x| x == id));
        st.avoidances.remove(id).is_some()
    }

    pub fn avoidances(&self) -> Vec<Avoidance> {
        self.state
            .read()
            .unwrap()
            .avoidances
            .values()
            .cloned()
            .collect()
    }

    /// Ids of the avoidances in force at a local time.
    pub fn active_avoidances(&self, departure: Option<i64>) -> Vec<String> {
        let st = self.state.read().unwrap();
        active_ids(&st, departure)
    }

    /// The metric in force for a kind at a departure time.
    pub fn metric(&self, kind: MetricKind, departure: Option<i64>) -> Arc<CityMetric> {
        let (base, active, model, avoid_list, bans) = {
            let st = self.state.read().unwrap();
            let Some(base) = st.base[kind as usize].clone() else {
                drop(st);
                // First use: built now, then looked at again (an avoidance may be in force).
                self.base_metric(kind);
                return self.metric(kind, departure);
            };
            if !kind.is_cycling() {
                return base;
            }
            let active = active_ids(&st, departure);
            if active.is_empty() {
                return base;
            }
            if let Some(m) = st.cache.get(&(kind, active.clone())) {
                return m.clone();
            }
            let list: Vec<Avoidance> = active.iter().map(|id| st.avoidances[id].clone()).collect();
            (base, active, st.model.clone(), list, st.turn_bans.clone())
        };
        // Build outside the lock: queries keep running on what they hold.
        let mut updates: HashMap<ArcId, Weight> = HashMap::new();
        for av in &avoid_list {
            for &a in &av.arcs {
                let w = match av.severity {
                    Severity::Closed => INF_WEIGHT,
                    Severity::Avoid => model.avoided(base.arc_weights[a as usize]),
                };
                let e = updates.entry(a).or_insert(w);
                *e = (*e).max(w);
            }
        }
        let updates: Vec<(ArcId, Weight)> = updates.into_iter().collect();
        let m = Arc::new(self.updated_metric(&base, &model, kind, &updates, &[], &bans));
        let mut st = self.state.write().unwrap();
        if st.cache.len() >= CACHE_LIMIT {
            st.cache.clear();
        }
        st.cache.insert((kind, active), m.clone());
        m
    }

    /// Replaces the turns banned for cycling (accepted reports): each ban is (from way, via node or
    /// any junction the two ways share, to way) by OSM ids. Every cycling metric is re-weighted at the
    /// junctions whose bans changed and swapped in. Returns how many turns the bans matched.
    pub fn set_turn_bans(&self, bans: &[(i64, Option<i64>, i64)]) -> usize {
        let g = &self.graph;
        let way_of: HashMap<i64, u32> = g
            .way_osm_id
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let mut banned = std::collections::HashSet::new();
        for &(from, via, to) in bans {
            let (Some(&fw), Some(&tw)) = (way_of.get(&from), way_of.get(&to)) else {
                continue;
            };
            for v in 0..g.node_count() as NodeId {
                if via.is_some_and(|n| g.node_osm_id[v as usize] != n) {
                    continue;
                }
                for t in self.turns.turns_at(v) {
                    let (a, b) = (
                        self.turns.node_arc[self.turns.turn_from[t] as usize],
                        self.turns.node_arc[self.turns.turn_to[t] as usize],
                    );
                    if g.arc_way(a) == fw
                        && g.arc_way(b) == tw
                        && self.turns.turn_flags[t] & crate::graph::turns::turn_flags::U_TURN == 0
                    {
                        banned.insert(t as u32);
                    }
                }
            }
        }
        let matched = banned.len();
        let _writer = self.writer.lock().unwrap();
        let (model, old_base, old_bans) = {
            let st = self.state.read().unwrap();
            (st.model.clone(), st.base.clone(), st.turn_bans.clone())
        };
        let via_of = |t: u32| (self.turns.via_first.partition_point(|&f| f <= t) - 1) as NodeId;
        let mut junctions: Vec<NodeId> = old_bans
            .symmetric_difference(&banned)
            .map(|&t| via_of(t))
            .collect();
        junctions.sort_unstable();
        junctions.dedup();
        use rayon::prelude::*;
        let updated: Vec<(MetricKind, Arc<CityMetric>)> = MetricKind::ALL
            .into_par_iter()
            .filter(|&k| k.is_cycling() && old_base[k as usize].is_some())
            .map(|kind| {
                let m = self.updated_metric(
                    old_base[kind as usize].as_ref().expect("filtered"),
                    &model,
                    kind,
                    &[],
                    &junctions,
                    &banned,
                );
                (kind, Arc::new(m))
            })
            .collect();
        let mut st = self.state.write().unwrap();
        for (kind, m) in updated {
            st.base[kind as usize] = Some(m);
        }
        st.turn_bans = banned;
        st.cache.clear();
        matched
    }

    /// A copy of a metric with new weights for some arcs: the turns at the junctions those arcs
    /// touch are re-weighted (the turns into an arc carry its weight, and closing an arc can make a
    /// dead end where a U-turn becomes the way on), then the hierarchy is partially re-customized.
    pub(super) fn updated_metric(
        &self,
        old: &CityMetric,
        model: &WeightingModel,
        kind: MetricKind,
        arc_updates: &[(ArcId, Weight)],
        more_junctions: &[NodeId],
        bans: &std::collections::HashSet<u32>,
    ) -> CityMetric {
        debug_assert!(
            kind.is_cycling() && !old.on_junctions,
            "walking never changes live"
        );
        let g = &self.graph;
        let mut arc_weights = old.arc_weights.clone();
        let mut junctions: Vec<NodeId> = more_junctions.to_vec();
        for &(a, w) in arc_updates {
            arc_weights.set(a as usize, w);
            junctions.push(g.arc_tail(a));
            junctions.push(g.arc_head(a));
        }
        junctions.sort_unstable();
        junctions.dedup();
        let mut updates: Vec<(ArcId, Weight)> = Vec::new();
        let mut buf = Vec::new();
        for &v in &junctions {
            let r = self.turns.turns_at(v);
            buf.clear();
            buf.resize(r.len(), INF_WEIGHT);
            model.turn_weights_at(g, &self.turns, v, kind, &arc_weights, &mut buf);
            for (i, t) in r.enumerate() {
                if bans.contains(&(t as u32)) {
                    buf[i] = INF_WEIGHT;
                }
                if old.input_weights[t] != buf[i] {
                    updates.push((t as ArcId, buf[i]));
                }
            }
        }
        let mut hierarchy = old.hierarchy.clone();
        old.cch.update(&mut hierarchy, &updates);
        CityMetric {
            arc_weights,
            hierarchy,
            cch: old.cch.clone(),
            on_junctions: false,
        }
    }
}

fn active_ids(st: &State, departure: Option<i64>) -> Vec<String> {
    st.avoidances
        .values()
        .filter(|a| match departure {
            Some(t) => a.schedule.is_active(t),
            None => a.schedule == crate::metric::avoid::Schedule::Always,
        })
        .map(|a| a.id.clone())
        .collect()
}

/// Bytes of the query-graph budget held for a pruning under way ([`City::reserve_query_graph`]),
/// given back when dropped.
struct Reservation {
    pruning: Arc<std::sync::atomic::AtomicUsize>,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.pruning
            .fetch_sub(self.bytes, std::sync::atomic::Ordering::AcqRel);
    }
}
