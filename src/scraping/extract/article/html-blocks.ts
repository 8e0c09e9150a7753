// HTML's block elements, for the extractors that turn a DOM into text.

/** Elements that end the line or paragraph before them and start a new one when rendered. */
export const BLOCKS: ReadonlySet<string> = new Set(
  'address article aside blockquote caption center dd details dialog div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody tfoot thead tr ul'.split(
    ' ',
  ),
);
