/**
 * Two-sided Mann-Whitney U test (normal approximation with tie-averaged ranks): the probability of
 * seeing samples at least this far apart if both came from one distribution. Used to compare latency
 * distributions without a fixed timing threshold.
 */
export function mannWhitneyPValue(a: number[], b: number[]): { u: number; z: number; p: number } {
  const all = [...a.map((v) => ({ v, group: 0 })), ...b.map((v) => ({ v, group: 1 }))].sort((x, y) => x.v - y.v);
  const ranks = new Array<number>(all.length);
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    for (let k = i; k <= j; k++) ranks[k] = (i + j) / 2 + 1;
    i = j + 1;
  }
  const rankSumA = all.reduce((sum, item, i) => (item.group === 0 ? sum + ranks[i]! : sum), 0);
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const z = (u - (n1 * n2) / 2) / Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
  return { u, z, p: 2 * (1 - standardNormalCdf(Math.abs(z))) };
}

/** Φ(x) through the Abramowitz-Stegun 7.1.26 approximation of erf (error below 1.5e-7). */
function standardNormalCdf(x: number): number {
  const t = 1 / (1 + 0.3275911 * (x / Math.SQRT2));
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-((x / Math.SQRT2) ** 2));
  return 0.5 * (1 + erf);
}
