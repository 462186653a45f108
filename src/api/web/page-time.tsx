/** A time as the pages show it (to the minute, UTC); null stays null. */
export function when(time: string | Date | null): string | null {
  if (time === null) return null;
  const iso = typeof time === "string" ? time : time.toISOString();
  return `${iso.slice(0, 16).replace("T", " ")} UTC`;
}

/** A time as a `<time>` element: `when`'s words (a narrow column breaks them after the day), the exact time for machines. */
export function When(props: { at: Date }) {
  const [day, minute] = when(props.at)!.split(" ", 2);
  return (
    <time datetime={props.at.toISOString()}>
      <span class="nowrap">{day}</span> <span class="nowrap">{minute} UTC</span>
    </time>
  );
}
