//! Flow-size distributions: (bytes, cumulative probability) points, sampled by inverting
//! the piecewise-linear CDF (as the ABM code and the DCTCP/HPCC generators do).

#[derive(Clone, Debug)]
pub struct Cdf {
    pts: Vec<(f64, f64)>,
}

impl Cdf {
    pub fn new(pts: &[(f64, f64)]) -> Result<Cdf, String> {
        if pts.len() < 2 {
            return Err("a CDF needs at least two points".into());
        }
        for w in pts.windows(2) {
            if w[1].0 < w[0].0 || w[1].1 < w[0].1 {
                return Err(format!("points must be non-decreasing in size and probability; ({}, {}) follows ({}, {})", w[1].0, w[1].1, w[0].0, w[0].1));
            }
        }
        let last = pts.last().unwrap().1;
        if (last - 1.0).abs() > 1e-9 {
            return Err(format!("the last cumulative probability is {last}, expected 1"));
        }
        if pts[0].1 < 0.0 || pts[0].0 < 0.0 {
            return Err("sizes and probabilities must be >= 0".into());
        }
        Ok(Cdf { pts: pts.to_vec() })
    }

    /// Inverse CDF at u in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.pts;
        if u <= p[0].1 {
            return p[0].0;
        }
        let i = p.partition_point(|&(_, c)| c < u).min(p.len() - 1);
        let (x0, c0) = p[i - 1];
        let (x1, c1) = p[i];
        if c1 <= c0 {
            return x1;
        }
        x0 + (x1 - x0) * (u - c0) / (c1 - c0)
    }

    /// Mean of the piecewise-linear distribution (segment midpoints weighted by probability).
    pub fn mean(&self) -> f64 {
        let mut m = self.pts[0].0 * self.pts[0].1;
        for w in self.pts.windows(2) {
            m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        m
    }

    /// A flow size in bytes (at least 1).
    pub fn sample<R: rand::Rng>(&self, rng: &mut R) -> u64 {
        loop {
            let s = self.quantile(rng.gen::<f64>()).round() as u64;
            if s > 0 {
                return s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn websearch_mean_matches_abm_code() {
        let pts = [(0.0, 0.0), (2000.0, 0.0), (2100.0, 0.02), (2500.0, 0.05), (6000.0, 0.1), (10000.0, 0.15), (20000.0, 0.2), (30000.0, 0.3), (50000.0, 0.4), (80000.0, 0.53), (200000.0, 0.6), (1e6, 0.7), (2e6, 0.8), (5e6, 0.9), (1e7, 0.97), (3e7, 1.0)];
        let c = Cdf::new(&pts).unwrap();
        // The ABM notes: avg_cdf = 1,711,222.5 B.
        assert!((c.mean() - 1_711_222.5).abs() < 1e-6, "{}", c.mean());
        assert_eq!(c.quantile(0.01), 2050.0);
        assert!((c.quantile(0.95) - (5e6 + 5e6 * 0.05 / 0.07)).abs() < 1e-6);
    }

    #[test]
    fn sample_mean_converges() {
        use rand::SeedableRng;
        let c = Cdf::new(&[(100.0, 0.0), (200.0, 0.5), (1000.0, 1.0)]).unwrap();
        let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| c.sample(&mut r) as f64).sum::<f64>() / n as f64;
        assert!((m - c.mean()).abs() / c.mean() < 0.01, "{m} vs {}", c.mean());
    }
}
