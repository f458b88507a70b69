//! Avoidance windows: a set of arcs, a severity and a schedule in the city's local wall-clock time.
//!
//! Times are *local minutes*: minutes since 1970-01-01 00:00 on the city's wall clock (the server
//! converts with the city's time zone), so schedules need no time-zone arithmetic here.

use crate::graph::ArcId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Impassable.
    Closed,
    /// Heavily penalised.
    Avoid,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    Always,
    /// Recurring weekly: on the given weekdays (bit 0 = Monday … bit 6 = Sunday) from `start_minute`
    /// to `end_minute` of the day; an end at or before the start runs past midnight into the next day.
    Weekly {
        weekdays: u8,
        start_minute: u16,
        end_minute: u16,
    },
    /// One range of local minutes, `[start, end)`, which may span days.
    Once {
        start: i64,
        end: i64,
    },
}

pub const MINUTES_PER_DAY: i64 = 1440;

/// Monday = 0 … Sunday = 6 (1970-01-01 was a Thursday).
pub fn weekday(local_minutes: i64) -> u8 {
    ((local_minutes.div_euclid(MINUTES_PER_DAY) + 3).rem_euclid(7)) as u8
}

impl Schedule {
    pub fn is_active(&self, t: i64) -> bool {
        match *self {
            Schedule::Always => true,
            Schedule::Once { start, end } => start <= t && t < end,
            Schedule::Weekly {
                weekdays,
                start_minute,
                end_minute,
            } => {
                let day = weekday(t);
                let minute = t.rem_euclid(MINUTES_PER_DAY) as u16;
                let on = |d: u8| weekdays & (1 << d) != 0;
                if start_minute < end_minute {
                    on(day) && start_minute <= minute && minute < end_minute
                } else {
                    // Crosses midnight (or runs a full day when start == end).
                    (on(day) && minute >= start_minute)
                        || (on((day + 6) % 7) && minute < end_minute)
                }
            }
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Schedule::Always => Ok(()),
            Schedule::Once { start, end } if end > start => Ok(()),
            Schedule::Once { .. } => Err("a one-time avoidance must end after it starts".into()),
            Schedule::Weekly {
                weekdays,
                start_minute,
                end_minute,
            } => {
                if weekdays == 0 || weekdays > 0x7f {
                    Err("weekdays must name at least one day (bits 0–6)".into())
                } else if start_minute >= 1440 || end_minute > 1440 {
                    Err("window minutes must lie within the day (0–1440)".into())
                } else {
                    Ok(())
                }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Avoidance {
    pub id: String,
    /// Directed arcs the avoidance applies to (both directions of a closed street).
    pub arcs: Vec<ArcId>,
    pub severity: Severity,
    pub schedule: Schedule,
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-23 is a Monday.
    fn at(days_from_monday: i64, hh: i64, mm: i64) -> i64 {
        let monday = 20_780; // days since 1970-01-01 of 2026-11-23
        (monday + days_from_monday) * MINUTES_PER_DAY + hh * 60 + mm
    }

    #[test]
    fn weekday_of_a_known_date() {
        assert_eq!(weekday(at(0, 12, 0)), 0);
        assert_eq!(weekday(at(6, 23, 59)), 6);
        assert_eq!(weekday(0), 3, "1970-01-01 was a Thursday");
    }

    #[test]
    fn weekly_window_within_a_day() {
        let s = Schedule::Weekly {
            weekdays: 0b0011111,
            start_minute: 7 * 60,
            end_minute: 10 * 60,
        };
        assert!(s.is_active(at(0, 7, 0)));
        assert!(s.is_active(at(4, 9, 59)));
        assert!(!s.is_active(at(4, 10, 0)));
        assert!(!s.is_active(at(5, 8, 0)), "Saturday is not in the mask");
    }

    #[test]
    fn weekly_window_across_midnight() {
        // Friday 22:00 to Saturday 06:00.
        let s = Schedule::Weekly {
            weekdays: 1 << 4,
            start_minute: 22 * 60,
            end_minute: 6 * 60,
        };
        assert!(s.is_active(at(4, 23, 30)));
        assert!(s.is_active(at(5, 5, 59)));
        assert!(!s.is_active(at(5, 6, 0)));
        assert!(!s.is_active(at(4, 21, 59)));
        assert!(
            !s.is_active(at(0, 1, 0)),
            "Monday night is not Friday night"
        );
    }

    #[test]
    fn one_time_range_spanning_days() {
        let s = Schedule::Once {
            start: at(1, 20, 0),
            end: at(3, 6, 0),
        };
        assert!(!s.is_active(at(1, 19, 59)));
        assert!(s.is_active(at(2, 12, 0)));
        assert!(!s.is_active(at(3, 6, 0)));
        assert!(Schedule::Once { start: 5, end: 5 }.validate().is_err());
    }
}
