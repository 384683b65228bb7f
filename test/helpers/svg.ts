/**
 * A small, strict XML reader for the SVG calendars of `coverage --html`: elements, attributes and text, with
 * every tag closed in order, every attribute quoted and only the five XML entities; anything else throws. It
 * reads what the page ships without a browser, so the test runs on a fresh machine.
 */

/** An element: its name, attributes (entities decoded), children and text. */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(#\d+|[a-z]+);|&/g, (_match, name: string | undefined) => {
    if (name === undefined) throw new Error(`a bare & in ${JSON.stringify(text)}`);
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    const value = ENTITIES[name];
    if (value === undefined) throw new Error(`unknown entity &${name};`);
    return value;
  });
}

/** Parses one XML element (the whole of `source`, surrounding blanks aside). */
export function parseXml(source: string): XmlElement {
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/y;
  const attribute = /\s+([\w:-]+)="([^"<]*)"/g;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let at = 0;
  const text = source.trim();
  while (at < text.length) {
    const open = text.indexOf('<', at);
    const chunk = text.slice(at, open < 0 ? text.length : open);
    if (chunk.trim() !== '') {
      const current = stack.at(-1);
      if (!current) throw new Error(`text outside the root element: ${JSON.stringify(chunk)}`);
      current.text += decode(chunk);
    }
    if (open < 0) break;
    tag.lastIndex = open;
    const match = tag.exec(text);
    if (!match) throw new Error(`malformed tag at ${open}: ${JSON.stringify(text.slice(open, open + 60))}`);
    const [whole, closing, name, attributes, selfClosing] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
    ];
    at = open + whole.length;
    if (closing) {
      const top = stack.pop();
      if (top?.name !== name) throw new Error(`</${name}> closes <${top?.name ?? 'nothing'}>`);
      continue;
    }
    const element: XmlElement = { name, attributes: {}, children: [], text: '' };
    for (const [, key, value] of attributes.matchAll(attribute)) {
      if (key === undefined || value === undefined) continue;
      if (key in element.attributes) throw new Error(`attribute ${key} given twice on <${name}>`);
      element.attributes[key] = decode(value);
    }
    const parent = stack.at(-1);
    if (parent) parent.children.push(element);
    else if (root) throw new Error('more than one root element');
    else root = element;
    if (!selfClosing) stack.push(element);
  }
  if (stack.length > 0) throw new Error(`<${stack.at(-1)?.name}> is never closed`);
  if (!root) throw new Error('no element');
  return root;
}

/** Every `<svg>…</svg>` of an HTML page, parsed. */
export function svgsOf(html: string): XmlElement[] {
  return [...html.matchAll(/<svg\b[\s\S]*?<\/svg>/g)].map((match) => parseXml(match[0]));
}

/** Every element named `name` below `element`, in document order. */
export function elementsNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.flatMap((child) => [
    ...(child.name === name ? [child] : []),
    ...elementsNamed(child, name),
  ]);
}
