//! `quietway-build-graph`: OSM extract → city graph file. `quietway build-graph` runs it.

use quietway_engine::graph::SafetyClass;
use quietway_graph_pipeline::build::{BuildInput, build};
use quietway_graph_pipeline::city::{CityConfig, load_cities, read_boundary};
use quietway_graph_pipeline::dem::{Dem, DemSet};
use quietway_graph_pipeline::places;
use quietway_graph_pipeline::progress::{Progress, peak_memory_bytes};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "Usage: quietway-build-graph --city <id> --osm <file>... [options]
       quietway-build-graph --list-cities [--cities <json>]

Builds <out>/<city>.qwg from OSM extracts (.osm.pbf, .osm, .osm.bz2), and beside it the place index
<out>/<city>.places.ndjson.

Options:
  --city <id>               the city to build (nyc, los-angeles, sf-bay-area, chicago, london,
                            or an id of the --cities file)
  --osm <file>...           OSM extracts to read (one or more; merged, newest version wins)
  --dem <file>...           elevation rasters, GeoTIFF or SRTM .hgt (without them elevation is
                            unknown)
  --out <dir>               where the graph is written (default data/graphs)
  --boundary <geojson>      the coverage polygons (default: the city's boundary file in the shared
                            data folder)
  --shared-data <dir>       the shared data folder (default ../shared/data)
  --cities <json>           a cities file replacing the built-in one (same shape as
                            graph-pipeline/cities.json; sample_extracts may be left out)
  --summary-json <file>     also write the build summary as JSON
  --min-island-nodes <n>    drop street networks smaller than n nodes (default 25); the largest
                            network is always kept
  --quiet, -q               no progress display
  --places-only             build only the place index
  --list-cities             print the known cities as JSON and exit
  --help, -h                this text";

struct Args {
    city: Option<String>,
    osm: Vec<PathBuf>,
    dem: Vec<PathBuf>,
    out: PathBuf,
    boundary: Option<PathBuf>,
    shared: PathBuf,
    cities: Option<PathBuf>,
    summary_json: Option<PathBuf>,
    min_island_nodes: usize,
    quiet: bool,
    list_cities: bool,
    places_only: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        city: None,
        osm: vec![],
        dem: vec![],
        out: PathBuf::from("data/graphs"),
        boundary: None,
        shared: PathBuf::from("../shared/data"),
        cities: None,
        summary_json: None,
        min_island_nodes: 25,
        quiet: false,
        list_cities: false,
        places_only: false,
    };
    let mut it = std::env::args().skip(1).peekable();
    let mut current_list: Option<&str> = None;
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--city" => a.city = Some(value("--city")?),
            "--osm" => {
                a.osm.push(value("--osm")?.into());
                current_list = Some("osm");
                continue;
            }
            "--dem" => {
                a.dem.push(value("--dem")?.into());
                current_list = Some("dem");
                continue;
            }
            "--out" => a.out = value("--out")?.into(),
            "--boundary" => a.boundary = Some(value("--boundary")?.into()),
            "--shared-data" => a.shared = value("--shared-data")?.into(),
            "--cities" => a.cities = Some(value("--cities")?.into()),
            "--summary-json" => a.summary_json = Some(value("--summary-json")?.into()),
            "--min-island-nodes" => {
                a.min_island_nodes = value("--min-island-nodes")?
                    .parse()
                    .map_err(|_| "--min-island-nodes takes a whole number".to_string())?
            }
            "--quiet" | "-q" => a.quiet = true,
            "--list-cities" => a.list_cities = true,
            "--places-only" => a.places_only = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            s if !s.starts_with('-') && current_list == Some("osm") => {
                a.osm.push(s.into());
                continue;
            }
            s if !s.starts_with('-') && current_list == Some("dem") => {
                a.dem.push(s.into());
                continue;
            }
            s => return Err(format!("unknown argument '{s}'")),
        }
        current_list = None;
    }
    Ok(a)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let cities = load_cities(args.cities.as_deref())?;
    if args.list_cities {
        let list: serde_json::Map<String, serde_json::Value> = cities
            .iter()
            .map(|(id, c)| {
                (
                    id.clone(),
                    serde_json::json!({ "name": c.name, "timezone": c.timezone, "sample_extracts": c.sample_extracts }),
                )
            })
            .collect();
        println!("{}", serde_json::Value::Object(list));
        return Ok(());
    }
    let city_id = args.city.clone().ok_or("--city is required")?;
    let city = cities.get(&city_id).cloned().ok_or_else(|| {
        format!(
            "unknown city '{city_id}' (known: {})",
            cities.keys().cloned().collect::<Vec<_>>().join(", ")
        )
    })?;
    if args.osm.is_empty() {
        return Err("at least one --osm file is required".into());
    }
    for p in args.osm.iter().chain(&args.dem) {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.len() == 0 {
            return Err(format!("{}: the file is empty", p.display()));
        }
    }
    let progress = Progress::new(args.quiet);
    if !args.quiet {
        eprintln!(
            "Building the {} graph from {} file(s)",
            city.name,
            args.osm.len()
        );
    }
    progress.phase("reading boundary and elevation", 0);
    let boundary = match &args.boundary {
        Some(b) => b.clone(),
        None if city.boundary.is_empty() => {
            return Err(format!(
                "city '{city_id}' names no boundary file: give --boundary <geojson>"
            ));
        }
        None => args.shared.join(&city.boundary),
    };
    let areas = read_boundary(&boundary).map_err(|e| format!("city boundary: {e}"))?;
    let dem = if args.dem.is_empty() {
        None
    } else {
        Some(DemSet(
            args.dem
                .iter()
                .map(|p| Dem::open(p))
                .collect::<Result<_, _>>()?,
        ))
    };
    if args.places_only {
        let places = build_place_index(&args, &city_id, &city.name, &areas, &progress)?;
        progress.finish_phase();
        print_place_report(&places);
        return Ok(());
    }
    // The place index reads the extracts on its own and needs nothing of the graph: it is built on
    // a thread of its own beside the graph's first phases, which keep one core busy of two.
    let city_name = city.name.clone();
    let place_areas = areas.clone();
    let quiet = Progress::new(true);
    std::thread::scope(|scope| {
        let places = scope.spawn(|| {
            let built = build_place_index(&args, &city_id, &city_name, &place_areas, &quiet);
            // Its thread's arena is not the graph's: what it freed goes back now, not at the
            // hierarchy's trim, or the graph's next steps peak on top of it.
            quietway_engine::give_back_freed_memory();
            built
        });
        build_graph_beside(&args, &city_id, city, dem, areas, &progress, places)
    })
}

/// The graph, while `places` builds the place index beside it; then both reports.
fn build_graph_beside(
    args: &Args,
    city_id: &str,
    city: CityConfig,
    dem: Option<DemSet>,
    areas: Vec<quietway_engine::graph::CoverageArea>,
    progress: &Progress,
    places: std::thread::ScopedJoinHandle<'_, Result<PlaceIndexBuilt, String>>,
) -> Result<(), String> {
    let input = BuildInput {
        city_id: city_id.to_string(),
        city,
        sources: args.osm.iter().map(|p| p.display().to_string()).collect(),
        osm: args.osm.clone(),
        dem,
        areas,
        min_component_nodes: args.min_island_nodes,
    };
    let (mut graph, report) = build(&input, progress)?;

    let turns = quietway_engine::turns::TurnGraph::new(
        &graph,
        &quietway_engine::turns::stored_restrictions(&graph),
    );
    // The two orders are independent: computed side by side, since neither keeps both cores
    // busy through its top cuts.
    progress.phase(
        "ordering the junctions for walking's hierarchy and the cycling turns for theirs",
        (graph.node_count() + turns.node_count()) as u64,
    );
    let usable = quietway_engine::metric::cycling_can_use(&graph, &turns);
    let timed = |f: &dyn Fn() -> Vec<u32>| {
        let t = std::time::Instant::now();
        (f(), t.elapsed().as_secs_f64())
    };
    let ((walking_order, walking_s), (cycling_order, cycling_s)) = rayon::join(
        || timed(&|| quietway_engine::order::nested_dissection_order(&graph)),
        || timed(&|| quietway_engine::order::cycling_order(&turns, &graph, &usable)),
    );
    progress.detail(&format!(
        "walking's done after {walking_s:.1} s, cycling's after {cycling_s:.1} s"
    ));
    graph.walking_order = walking_order;
    graph.cycling_order = cycling_order;
    // The cycling hierarchy is stored too, so that the server need not build it at every start.
    progress.phase("building the cycling hierarchy", 0);
    drop(turns); // built again there, from the graph alone
    quietway_engine::city::store_cycling_hierarchy(&mut graph);

    progress.phase("writing the graph", 0);
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let path = args.out.join(format!("{city_id}.qwg"));
    // What a load checks of the graph, checked before it is written (with its hierarchy now).
    graph.validate()?;
    quietway_engine::format::write_file(&graph, &path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // The graph is on disk: its memory goes back before the file is read back, its checksum
    // streamed from disk rather than the file parsed whole beside a copy of it.
    drop(graph);
    quietway_engine::give_back_freed_memory();
    let version = quietway_engine::format::check_file(&path).map_err(|e| e.to_string())?;
    if !places.is_finished() {
        progress.phase("place index (built beside the graph)", 0);
    }
    let places = places
        .join()
        .map_err(|_| "the place index's thread panicked".to_string())??;
    progress.finish_phase();

    let seconds = progress.elapsed_s();
    let peak = peak_memory_bytes().unwrap_or(0);
    let entities = report.counts.total();
    println!(
        "Graph {} written to {} (graph_version {version})",
        city_id,
        path.display()
    );
    println!(
        "  OSM entities read   {} ({} nodes, {} ways, {} relations), {:.0} per second",
        entities,
        report.counts.nodes,
        report.counts.ways,
        report.counts.relations,
        entities as f64 / seconds.max(1e-9)
    );
    println!(
        "  routable            {} nodes, {} edges, {} arcs ({} rideable, {} walkable)",
        report.nodes, report.edges, report.arcs, report.bike_arcs, report.foot_arcs
    );
    println!(
        "  turn restrictions   {} applied, {} not applicable",
        report.restrictions_applied, report.restrictions_ignored
    );
    println!(
        "  islands removed     {} ({} nodes); bicycle parking {}",
        report.dropped_components, report.dropped_nodes, report.parking
    );
    println!(
        "  sidewalks named     {} of {} unnamed, after the street beside them",
        report.sidewalks_named, report.sidewalks_unnamed
    );
    println!("  km rideable per safety class:");
    for c in SafetyClass::ALL {
        println!(
            "    {:<10} {:>9.1}",
            c.name(),
            report.km_per_class[c as usize]
        );
    }
    print_place_report(&places);
    println!(
        "  time {:.2} s, peak memory {:.0} MB",
        seconds,
        peak as f64 / 1e6
    );
    if let Some(p) = &args.summary_json {
        let km: serde_json::Map<String, serde_json::Value> = SafetyClass::ALL
            .iter()
            .map(|c| {
                (
                    c.name().to_string(),
                    report.km_per_class[*c as usize].into(),
                )
            })
            .collect();
        let json = serde_json::json!({
            "city": city_id, "graph_version": version, "path": path,
            "entities": entities, "nodes_read": report.counts.nodes, "ways_read": report.counts.ways,
            "relations_read": report.counts.relations, "entities_per_second": entities as f64 / seconds,
            "graph_nodes": report.nodes, "graph_edges": report.edges, "graph_arcs": report.arcs,
            "km_per_class": km, "seconds": seconds, "peak_memory_bytes": peak,
            "restrictions_applied": report.restrictions_applied,
            "places": {
                "path": places.path, "streets": places.report.streets, "pois": places.report.pois,
                "places": places.report.places, "seconds": places.seconds,
            },
        });
        std::fs::write(p, serde_json::to_string_pretty(&json).unwrap())
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

/// The place index written beside the graph, and what it holds.
struct PlaceIndexBuilt {
    path: PathBuf,
    report: places::PlaceReport,
    seconds: f64,
}

fn build_place_index(
    args: &Args,
    city_id: &str,
    city_name: &str,
    areas: &[quietway_engine::graph::CoverageArea],
    progress: &Progress,
) -> Result<PlaceIndexBuilt, String> {
    let start = std::time::Instant::now();
    let entries = places::build_places(&args.osm, city_name, areas, progress)?;
    progress.phase("writing the place index", 0);
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let path = args.out.join(format!("{city_id}.places.ndjson"));
    places::write_places(&path, city_id, city_name, &entries)?;
    Ok(PlaceIndexBuilt {
        path,
        report: places::report(&entries),
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn print_place_report(p: &PlaceIndexBuilt) {
    println!(
        "  place index         {} entries ({} streets, {} points of interest, {} places) in {:.2} s → {}",
        p.report.total(),
        p.report.streets,
        p.report.pois,
        p.report.places,
        p.seconds,
        p.path.display()
    );
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nquietway-build-graph: {e}");
            ExitCode::FAILURE
        }
    }
}
