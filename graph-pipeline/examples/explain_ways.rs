//! Developer tool: prints the tags and the rules' verdict for ways whose name contains a text.
//! `cargo run --release -p quietway-graph-pipeline --example explain_ways -- <city> <file> <name>`

use quietway_graph_pipeline::city::load_cities;
use quietway_graph_pipeline::osm::{read_ways_and_relations, tag};
use quietway_graph_pipeline::progress::Progress;
use quietway_graph_pipeline::rules::classify;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [city, file, needle] = &args[..] else {
        eprintln!("usage: explain_ways <city> <osm file> <name substring>");
        std::process::exit(2);
    };
    let rules = load_cities(None).unwrap()[city].rules();
    let (ways, _, _) = read_ways_and_relations(file.as_ref(), &Progress::new(true)).unwrap();
    let needle = needle.to_lowercase();
    for w in ways {
        let name = tag(&w.tags, "name").unwrap_or("");
        if !name.to_lowercase().contains(&needle) {
            continue;
        }
        let verdict = classify(&w.tags, &rules);
        let tags: Vec<String> = w
            .tags
            .iter()
            .filter(|(k, _)| !k.starts_with("tiger:") && !k.starts_with("name:"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        match verdict {
            Some(p) => println!(
                "way {} fwd={:?}/{:?} bwd={:?}/{:?} lts={}/{}\n    {}",
                w.id,
                p.forward.safety_class(),
                p.forward.bike(),
                p.backward.safety_class(),
                p.backward.bike(),
                p.lts_forward,
                p.lts_backward,
                tags.join(" ")
            ),
            None => println!("way {} not routable\n    {}", w.id, tags.join(" ")),
        }
    }
}
