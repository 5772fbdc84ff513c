// CVSS base scores from vectors (v3.0, v3.1 and v2), and the score of an OSV severity list (decisions §11).

/** One entry of an OSV `severity` array: `type` CVSS_V2, CVSS_V3 or CVSS_V4; `score` the vector. */
export interface SeverityEntry {
  type: string;
  score: string;
}

type Weights = Record<string, Record<string, number>>;

// CVSS v3.1 specification §7.4 (v3.0 uses the same base weights).
const V3_WEIGHTS: Weights = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
  AC: { L: 0.77, H: 0.44 },
  PR: { N: 0.85, L: 0.62, H: 0.27 },
  UI: { N: 0.85, R: 0.62 },
  S: { U: 0, C: 1 },
  C: { H: 0.56, L: 0.22, N: 0 },
  I: { H: 0.56, L: 0.22, N: 0 },
  A: { H: 0.56, L: 0.22, N: 0 },
};

// Temporal and environmental metrics may follow the base metrics; they do not change the base score.
const V3_OTHER: Record<string, string> = {
  E: 'XUPFH', RL: 'XOTWU', RC: 'XURC', CR: 'XLMH', IR: 'XLMH', AR: 'XLMH', MAV: 'XNALP', MAC: 'XLH',
  MPR: 'XNLH', MUI: 'XNR', MS: 'XUC', MC: 'XNLH', MI: 'XNLH', MA: 'XNLH',
};

// CVSS v2 guide §3.2.1.
const V2_WEIGHTS: Weights = {
  AV: { L: 0.395, A: 0.646, N: 1 },
  AC: { H: 0.35, M: 0.61, L: 0.71 },
  Au: { M: 0.45, S: 0.56, N: 0.704 },
  C: { N: 0, P: 0.275, C: 0.66 },
  I: { N: 0, P: 0.275, C: 0.66 },
  A: { N: 0, P: 0.275, C: 0.66 },
};

const V2_OTHER: Record<string, string[]> = {
  E: ['U', 'POC', 'F', 'H', 'ND'], RL: ['OF', 'TF', 'W', 'U', 'ND'], RC: ['UC', 'UR', 'C', 'ND'],
  CDP: ['N', 'L', 'LM', 'MH', 'H', 'ND'], TD: ['N', 'L', 'M', 'H', 'ND'], CR: ['L', 'M', 'H', 'ND'],
  IR: ['L', 'M', 'H', 'ND'], AR: ['L', 'M', 'H', 'ND'],
};

/**
 * Splits `K:V/K:V…` into its base metric values, or null when a metric is unknown, repeated, has a value
 * outside its range, or a base metric is missing.
 */
function parseMetrics(parts: string[], weights: Weights, other: (key: string, value: string) => boolean): Record<string, string> | null {
  const values: Record<string, string> = {};
  const seen = new Set<string>();
  for (const part of parts) {
    const colon = part.indexOf(':');
    if (colon <= 0) return null;
    const key = part.slice(0, colon);
    const value = part.slice(colon + 1);
    if (seen.has(key)) return null;
    seen.add(key);
    if (Object.hasOwn(weights, key)) {
      if (!Object.hasOwn(weights[key], value)) return null;
      values[key] = value;
    } else if (!other(key, value)) {
      return null;
    }
  }
  for (const key of Object.keys(weights)) if (!Object.hasOwn(values, key)) return null;
  return values;
}

/** CVSS v3.1 Appendix A: round up to one decimal, in integers so that 4.000000001 stays 4.0. */
function roundUp31(value: number): number {
  const scaled = Math.round(value * 100000);
  return scaled % 10000 === 0 ? scaled / 100000 : (Math.floor(scaled / 10000) + 1) / 10;
}

/** CVSS v3.0 §8.1: the smallest one-decimal number not below the value, as its reference calculator computes it. */
function roundUp30(value: number): number {
  return Math.ceil(value * 10) / 10;
}

/** Base score of a `CVSS:3.0/…` or `CVSS:3.1/…` vector; null when the vector is not valid. */
export function cvss3BaseScore(vector: string): number | null {
  const parts = vector.trim().split('/');
  const version = parts.shift();
  if (version !== 'CVSS:3.0' && version !== 'CVSS:3.1') return null;
  const m = parseMetrics(parts, V3_WEIGHTS, (key, value) => Object.hasOwn(V3_OTHER, key) && value.length === 1 && V3_OTHER[key].includes(value));
  if (m === null) return null;
  const changed = m.S === 'C';
  // PR weighs more when the scope changes (spec §7.4).
  const privileges = m.PR === 'N' ? 0.85 : m.PR === 'L' ? (changed ? 0.68 : 0.62) : changed ? 0.5 : 0.27;
  const iss = 1 - (1 - V3_WEIGHTS.C[m.C]) * (1 - V3_WEIGHTS.I[m.I]) * (1 - V3_WEIGHTS.A[m.A]);
  const impact = changed ? 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15) : 6.42 * iss;
  if (impact <= 0) return 0;
  const exploitability = 8.22 * V3_WEIGHTS.AV[m.AV] * V3_WEIGHTS.AC[m.AC] * privileges * V3_WEIGHTS.UI[m.UI];
  const roundUp = version === 'CVSS:3.1' ? roundUp31 : roundUp30;
  return changed ? roundUp(Math.min(1.08 * (impact + exploitability), 10)) : roundUp(Math.min(impact + exploitability, 10));
}

/** Base score of a CVSS v2 vector (`AV:N/AC:L/Au:N/C:P/I:P/A:P`, optionally in parentheses); null when invalid. */
export function cvss2BaseScore(vector: string): number | null {
  let text = vector.trim();
  if (text.startsWith('(') && text.endsWith(')')) text = text.slice(1, -1);
  if (text.startsWith('CVSS:2.0/')) text = text.slice('CVSS:2.0/'.length);
  const m = parseMetrics(text.split('/'), V2_WEIGHTS, (key, value) => Object.hasOwn(V2_OTHER, key) && V2_OTHER[key].includes(value));
  if (m === null) return null;
  const impact = 10.41 * (1 - (1 - V2_WEIGHTS.C[m.C]) * (1 - V2_WEIGHTS.I[m.I]) * (1 - V2_WEIGHTS.A[m.A]));
  const exploitability = 20 * V2_WEIGHTS.AV[m.AV] * V2_WEIGHTS.AC[m.AC] * V2_WEIGHTS.Au[m.Au];
  const f = impact === 0 ? 0 : 1.176;
  // The guide rounds to one decimal; the epsilon keeps a binary 6.45 (6.4499999…) from rounding down.
  return Math.round((0.6 * impact + 0.4 * exploitability - 1.5) * f * 10 + 1e-9) / 10;
}

/** The score of an OSV severity list: the first valid CVSS v3.x vector, else the first valid v2 vector. */
export function scoreFromSeverity(severity: readonly SeverityEntry[]): { score: number | null; vector: string | null } {
  for (const entry of severity) {
    if (entry.type !== 'CVSS_V3') continue;
    const score = cvss3BaseScore(entry.score);
    if (score !== null) return { score, vector: entry.score };
  }
  for (const entry of severity) {
    if (entry.type !== 'CVSS_V2') continue;
    const score = cvss2BaseScore(entry.score);
    if (score !== null) return { score, vector: entry.score };
  }
  return { score: null, vector: null };
}

/** The severity band of a CVSS base score (the CVSS v3 bands; CycloneDX uses the same names). */
export function severityBand(score: number | null): 'critical' | 'high' | 'medium' | 'low' | 'none' | 'unknown' {
  if (score === null) return 'unknown';
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'none';
}
