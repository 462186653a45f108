/**
 * Tokens per day per model as stacked bars, drawn on the server as plain SVG: no script, no
 * chart library. Its title and description name it for screen readers; the table beside it on
 * the page (usage-section.tsx) holds the same figures.
 */

/** A day's tokens of one model: one part of that day's bar. */
export interface DayModelTokens {
  day: string;
  model: string;
  tokens: number;
}

/** As many colours as style.css defines (`.series-0` …); more models take them again. */
export const SERIES_COLOURS = 8;

const WIDTH = 720;
const HEIGHT = 260;
const MARGIN = { top: 12, right: 12, bottom: 44, left: 64 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;

export function UsageChart(props: { id: string; days: string[]; models: string[]; cells: DayModelTokens[] }) {
  const { id, days, models, cells } = props;
  const byDay = new Map<string, DayModelTokens[]>();
  for (const cell of cells) byDay.set(cell.day, [...(byDay.get(cell.day) ?? []), cell]);
  const highest = Math.max(0, ...days.map((d) => (byDay.get(d) ?? []).reduce((sum, c) => sum + c.tokens, 0)));
  const ticks = axisTicks(highest);
  const top = ticks.at(-1)!;
  const y = (tokens: number) => MARGIN.top + PLOT_H - (tokens / top) * PLOT_H;
  const slot = PLOT_W / days.length;
  const barWidth = Math.max(1, slot * 0.7);
  const labelEvery = days.length <= 10 ? 1 : days.length <= 31 ? 5 : 15;
  const first = days[0];
  const last = days.at(-1);
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-labelledby={`${id}-title ${id}-desc`}
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id={`${id}-title`}>Tokens per day per model</title>
      <desc id={`${id}-desc`}>
        {`Stacked bars, one a day from ${first} to ${last} (UTC): each model's prompt and completion tokens that day, ` +
          `${models.length} model${models.length === 1 ? "" : "s"}. The table below holds the same figures.`}
      </desc>
      <g class="grid">
        {ticks.map((t) => (
          <>
            <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(t)} y2={y(t)} />
            <text x={MARGIN.left - 6} y={y(t) + 4} text-anchor="end">
              {compact(t)}
            </text>
          </>
        ))}
      </g>
      <g class="bars">
        {days.map((day, i) => {
          let base = 0;
          const x = MARGIN.left + i * slot + (slot - barWidth) / 2;
          return (
            <g>
              {(byDay.get(day) ?? []).map((cell) => {
                const bottom = y(base);
                base += cell.tokens;
                return (
                  <rect
                    class={`series-${models.indexOf(cell.model) % SERIES_COLOURS}`}
                    x={round(x)}
                    y={round(y(base))}
                    width={round(barWidth)}
                    height={round(bottom - y(base))}
                  >
                    <title>{`${day} · ${cell.model}: ${cell.tokens.toLocaleString("en-US")} tokens`}</title>
                  </rect>
                );
              })}
            </g>
          );
        })}
      </g>
      <g class="axis">
        <line x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(0)} y2={y(0)} />
        {days.map((day, i) =>
          i % labelEvery === 0 ? (
            <text x={round(MARGIN.left + (i + 0.5) * slot)} y={y(0) + 16} text-anchor="middle">
              {day.slice(5)}
            </text>
          ) : null,
        )}
        <text x={MARGIN.left + PLOT_W / 2} y={HEIGHT - 6} text-anchor="middle" class="axis-title">
          Day (UTC)
        </text>
        <text
          x={14}
          y={MARGIN.top + PLOT_H / 2}
          text-anchor="middle"
          class="axis-title"
          transform={`rotate(-90 14 ${MARGIN.top + PLOT_H / 2})`}
        >
          Tokens
        </text>
      </g>
    </svg>
  );
}

/** Round steps (1, 2 or 5 times a power of ten, whole tokens) from 0 to at least `highest`. */
export function axisTicks(highest: number): number[] {
  if (highest <= 0) return [0, 1];
  const rough = highest / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!);
  const ticks: number[] = [];
  for (let t = 0; t < highest + step; t += step) ticks.push(t);
  return ticks;
}

/** 1200 → "1.2k", 3000000 → "3M": the axis labels' width stays small. */
function compact(n: number): string {
  return new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 }).format(n);
}

const round = (n: number) => Math.round(n * 10) / 10;
