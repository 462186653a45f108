import type { Child } from "hono/jsx";

/**
 * A table of the pages: column headers, rows of cells, scrolling sideways on a narrow screen.
 * On a phone each row stacks its cells, each labelled with its column (style.css, data-label).
 */
export function Table(props: { caption?: string; headers: string[]; rows: Child[][] }) {
  return (
    <div class="table-scroll">
      <table>
        {props.caption && <caption>{props.caption}</caption>}
        <thead>
          <tr>
            {props.headers.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((cells) => (
            <tr>
              {cells.map((cell, i) => (
                <td data-label={props.headers[i]}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
