//! What the device and the driver say about the sort: the subgroup sizes and compute units
//! kernels see (`Device::facts`) and, for each kernel the device launched, the driver's
//! statistics (`Device::kernel_stats`: registers, spills, shared memory and its whole list)
//! or why it has none. The demo's `--bench --json` and the bench example's `BENCH_STATS=1`
//! print them.

use rgpu::Device;

/// `text` as a JSON string.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A number, or `null` when there is none.
fn json_number(value: Option<impl std::fmt::Display>) -> String {
    value.map_or_else(|| "null".to_string(), |v| v.to_string())
}

/// A statistic's value as the driver gave it: a JSON number or boolean (a float that is
/// not finite becomes a string).
fn json_value(text: String) -> String {
    let literal =
        text == "true" || text == "false" || text.parse::<f64>().is_ok_and(f64::is_finite);
    if literal {
        text
    } else {
        json_string(&text)
    }
}

/// `"device_facts": {...}, "kernel_stats": [...]` (or `"kernel_stats": null,
/// "kernel_stats_unavailable": "why"`): the keys the demo adds to its JSON.
pub fn json_fields(device: &Device) -> String {
    let facts = device.facts();
    let facts = format!(
        "{{\"subgroup_size\": {}, \"subgroup_min\": {}, \"subgroup_max\": {}, \
         \"compute_units\": {}, \"compute_unit\": {}, \"source\": {}}}",
        json_number(facts.subgroup_size),
        json_number(facts.subgroup_min),
        json_number(facts.subgroup_max),
        json_number(facts.compute_units),
        json_string(facts.compute_unit),
        json_string(&facts.source),
    );
    let stats = match device.kernel_stats() {
        Ok(kernels) => {
            let kernels: Vec<String> = kernels
                .iter()
                .map(|k| {
                    let stats: Vec<String> = k
                        .stats
                        .iter()
                        .map(|s| {
                            format!(
                                "{{\"executable\": {}, \"name\": {}, \"value\": {}, \
                                 \"description\": {}}}",
                                json_string(&s.executable),
                                json_string(&s.name),
                                json_value(s.value.to_string()),
                                json_string(&s.description)
                            )
                        })
                        .collect();
                    format!(
                        "{{\"kernel\": {}, \"registers\": {}, \"local_bytes\": {}, \
                         \"shared_bytes\": {}, \"subgroup_size\": {}, \"source\": {}, \
                         \"stats\": [{}]}}",
                        json_string(k.kernel),
                        json_number(k.registers),
                        json_number(k.local_bytes),
                        json_number(k.shared_bytes),
                        json_number(k.subgroup_size),
                        json_string(k.source),
                        stats.join(", ")
                    )
                })
                .collect();
            format!("\"kernel_stats\": [{}]", kernels.join(", "))
        }
        Err(why) => format!(
            "\"kernel_stats\": null, \"kernel_stats_unavailable\": {}",
            json_string(&why.to_string())
        ),
    };
    format!("\"device_facts\": {facts}, {stats}")
}

/// A number, or `?` when there is none (`text_lines`).
fn shown(value: Option<impl std::fmt::Display>) -> String {
    value.map_or_else(|| "?".to_string(), |v| v.to_string())
}

/// The same as lines of text, for people: one for the facts, one per kernel (its summary,
/// then every statistic as `name=value`), or the error saying why there are none.
pub fn text_lines(device: &Device) -> Vec<String> {
    let facts = device.facts();
    let mut lines = vec![format!(
        "{} facts: subgroup_size={} subgroup_min={} subgroup_max={} compute_units={}{} ({})",
        facts.backend,
        shown(facts.subgroup_size),
        shown(facts.subgroup_min),
        shown(facts.subgroup_max),
        shown(facts.compute_units),
        if facts.compute_unit.is_empty() {
            String::new()
        } else {
            format!(" {}", facts.compute_unit)
        },
        facts.source
    )];
    match device.kernel_stats() {
        Ok(kernels) => {
            for k in kernels {
                let raw: Vec<String> = k
                    .stats
                    .iter()
                    .map(|s| {
                        if s.executable.is_empty() {
                            format!("{}={}", s.name, s.value)
                        } else {
                            format!("[{}] {}={}", s.executable, s.name, s.value)
                        }
                    })
                    .collect();
                lines.push(format!(
                    "{} stats {}: registers={} local_bytes={} shared_bytes={} subgroup_size={} \
                     ({}): {}",
                    facts.backend,
                    k.kernel,
                    shown(k.registers),
                    shown(k.local_bytes),
                    shown(k.shared_bytes),
                    shown(k.subgroup_size),
                    k.source,
                    raw.join("; ")
                ));
            }
        }
        Err(why) => lines.push(why.to_string()),
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_values_are_valid_json() {
        assert_eq!(
            json_string("a \"b\"\\\n\u{1}"),
            "\"a \\\"b\\\"\\\\\\n\\u0001\""
        );
        assert_eq!(json_value("42".into()), "42");
        assert_eq!(json_value("-1.5".into()), "-1.5");
        assert_eq!(json_value("true".into()), "true");
        assert_eq!(json_value("inf".into()), "\"inf\"");
        assert_eq!(json_value("NaN".into()), "\"NaN\"");
        assert_eq!(json_number(None::<u32>), "null");
    }

    #[test]
    fn the_cpu_device_has_facts_and_says_why_it_has_no_stats() {
        let device = Device::open(rgpu::Backend::Cpu).unwrap();
        let fields = json_fields(&device);
        assert!(
            fields.starts_with("\"device_facts\": {\"subgroup_size\": 1, "),
            "{fields}"
        );
        assert!(
            fields.contains("\"kernel_stats\": null, \"kernel_stats_unavailable\": \"cpu: "),
            "{fields}"
        );
        let lines = text_lines(&device);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[1].starts_with("cpu: no per-kernel statistics: "),
            "{lines:?}"
        );
    }
}
