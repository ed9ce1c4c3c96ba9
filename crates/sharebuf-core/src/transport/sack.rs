//! The sender's SACK scoreboard (RFC 2018, RFC 6675): sorted, disjoint byte ranges above the
//! cumulative ACK that the receiver reported holding.

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
    sacked: u64,
}

impl Scoreboard {
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Bytes reported held above the cumulative ACK.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }

    /// End of the highest SACKed range (0 if none).
    pub fn highest(&self) -> u64 {
        self.ranges.last().map_or(0, |r| r.1)
    }

    /// Record [s, e) as held by the receiver.
    pub fn insert(&mut self, s: u64, e: u64) {
        if e <= s {
            return;
        }
        let i = self.ranges.partition_point(|&(_, b)| b < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < self.ranges.len() && self.ranges[j].0 <= ne {
            ns = ns.min(self.ranges[j].0);
            ne = ne.max(self.ranges[j].1);
            self.sacked -= self.ranges[j].1 - self.ranges[j].0;
            j += 1;
        }
        self.ranges.splice(i..j, std::iter::once((ns, ne)));
        self.sacked += ne - ns;
    }

    /// Forget everything below `una` (it is cumulatively acknowledged).
    pub fn trim_below(&mut self, una: u64) {
        let mut k = 0;
        while k < self.ranges.len() && self.ranges[k].1 <= una {
            self.sacked -= self.ranges[k].1 - self.ranges[k].0;
            k += 1;
        }
        self.ranges.drain(..k);
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < una {
                self.sacked -= una - first.0;
                first.0 = una;
            }
        }
    }

    /// If `seq` lies inside a SACKed range, that range's end.
    pub fn covering(&self, seq: u64) -> Option<u64> {
        let i = self.ranges.partition_point(|&(_, b)| b <= seq);
        self.ranges.get(i).filter(|r| r.0 <= seq).map(|r| r.1)
    }

    /// The first un-SACKed gap [s, e) at or after `from` and below the highest SACKed byte.
    pub fn next_hole(&self, from: u64) -> Option<(u64, u64)> {
        let mut pos = from;
        for &(a, b) in &self.ranges {
            if b <= pos {
                continue;
            }
            if a > pos {
                return Some((pos, a));
            }
            pos = b;
        }
        None
    }

    /// Un-SACKed bytes in [from, highest): holes not yet retransmitted when `from` is the
    /// retransmission frontier.
    pub fn hole_bytes_from(&self, from: u64) -> u64 {
        let hi = self.highest();
        if from >= hi {
            return 0;
        }
        let covered: u64 = self.ranges.iter().map(|&(a, b)| b.min(hi).saturating_sub(a.max(from))).sum();
        (hi - from) - covered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoreboard_ranges_holes_and_trim() {
        let mut sb = Scoreboard::default();
        sb.insert(3000, 4000);
        sb.insert(6000, 7000);
        sb.insert(3500, 5000);
        assert_eq!(sb.sacked_bytes(), 3000);
        assert_eq!(sb.highest(), 7000);
        assert_eq!(sb.next_hole(1000), Some((1000, 3000)));
        assert_eq!(sb.next_hole(3000), Some((5000, 6000)));
        assert_eq!(sb.next_hole(6500), None);
        assert_eq!(sb.hole_bytes_from(1000), 2000 + 1000);
        assert_eq!(sb.hole_bytes_from(5500), 500);
        assert_eq!(sb.covering(3200), Some(5000));
        assert_eq!(sb.covering(5000), None);
        sb.trim_below(3500);
        assert_eq!(sb.sacked_bytes(), 2500);
        sb.insert(5000, 6000);
        assert_eq!(sb.sacked_bytes(), 3500);
        assert_eq!(sb.next_hole(3500), None);
        sb.trim_below(8000);
        assert!(sb.is_empty() && sb.sacked_bytes() == 0);
    }
}
