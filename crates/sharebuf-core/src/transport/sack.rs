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
        self.hole_bytes_between(from, self.highest())
    }

    /// Un-SACKed bytes in [from, to).
    pub fn hole_bytes_between(&self, from: u64, to: u64) -> u64 {
        if from >= to {
            return 0;
        }
        let covered: u64 = self.ranges.iter().map(|&(a, b)| b.min(to).saturating_sub(a.max(from))).sum();
        (to - from) - covered
    }

    /// The start of the `dup_thresh`-th highest SACKed segment of `mss` bytes (segments start at
    /// multiples of `mss`; a range's last one may be shorter): the un-SACKed data below it is
    /// presumed lost, as ns-3.39's `TcpTxBuffer::UpdateLostCount` marks it (RFC 6675's IsLost
    /// counted in segments). 0 while fewer segments are SACKed: nothing is presumed lost.
    pub fn lost_below(&self, dup_thresh: u64, mss: u64) -> u64 {
        let mut acc = 0;
        for &(a, b) in self.ranges.iter().rev() {
            let n = (b - a).div_ceil(mss);
            if acc + n >= dup_thresh {
                return a + (n - (dup_thresh - acc)) * mss;
            }
            acc += n;
        }
        0
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

    /// Segments of 1000 B: SACKed [3000, 5000) and [6000, 6500) (a flow's short last segment).
    /// Three SACKed segments from the top are 6000, 4000 and 3000: below 3000 is presumed lost;
    /// with two SACKed segments nothing is.
    #[test]
    fn lost_below_counts_sacked_segments_from_the_top() {
        let mut sb = Scoreboard::default();
        sb.insert(6000, 6500);
        sb.insert(4000, 5000);
        assert_eq!(sb.lost_below(3, 1000), 0);
        sb.insert(3000, 4000);
        assert_eq!(sb.lost_below(3, 1000), 3000);
        assert_eq!(sb.lost_below(2, 1000), 4000);
        assert_eq!(sb.lost_below(1, 1000), 6000);
        assert_eq!(sb.hole_bytes_between(1000, 3000), 2000);
        assert_eq!(sb.hole_bytes_between(1000, 6500), 2000 + 1000);
        assert_eq!(sb.hole_bytes_between(1000, sb.highest()), sb.hole_bytes_from(1000));
    }
}
