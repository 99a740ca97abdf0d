/** One searchable document: weighted text fields. */
export interface SearchDocument<T> {
  item: T;
  fields: ReadonlyArray<readonly [text: string | undefined, weight: number]>;
}

export interface SearchHit<T> {
  item: T;
  score: number;
}

const MAX_QUERY_TERMS = 16;
const MAX_QUERY_LENGTH = 512;
const STOP_WORDS = new Set([
  'a',
  'an',
  'and',
  'the',
  'of',
  'to',
  'for',
  'in',
  'on',
  'or',
  'by',
  'with',
  'is',
  'it',
  'be',
  'as',
  'at',
  'from',
  'this',
  'that',
]);

/**
 * Words of a text: camelCase and snake_case split, lower-cased, a plural `s` dropped, stop words
 * left out. The same for documents and queries, so `listInvoices`, `list_invoices` and
 * "list invoice" meet.
 */
export function tokenize(text: string): string[] {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  const out: string[] = [];
  for (const word of words) {
    if (word.length < 2 || word.length > 40 || STOP_WORDS.has(word)) continue;
    out.push(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
  }
  return out;
}

/**
 * Okapi BM25 over weighted fields (a field's weight multiplies its term counts), built once per
 * list of tools. A query costs its (at most 16) terms' posting lists; ties keep document order,
 * so the same query over the same tools always ranks the same.
 */
export class Bm25Index<T> {
  private readonly postings = new Map<string, Array<[doc: number, tf: number]>>();
  private readonly lengths: number[] = [];
  private readonly averageLength: number;

  constructor(
    private readonly documents: ReadonlyArray<SearchDocument<T>>,
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    documents.forEach((document, index) => {
      const counts = new Map<string, number>();
      let length = 0;
      for (const [text, weight] of document.fields) {
        if (!text) continue;
        for (const term of tokenize(text)) {
          counts.set(term, (counts.get(term) ?? 0) + weight);
          length += weight;
        }
      }
      this.lengths.push(length);
      for (const [term, tf] of counts) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push([index, tf]);
      }
    });
    this.averageLength = this.lengths.reduce((sum, length) => sum + length, 0) / Math.max(1, documents.length);
  }

  /** The best `limit` documents for a query among those `accept` admits, best first. */
  search(query: string, limit: number, accept: (item: T) => boolean = () => true): SearchHit<T>[] {
    const terms = [...new Set(tokenize(query.slice(0, MAX_QUERY_LENGTH)))].slice(0, MAX_QUERY_TERMS);
    const scores = new Map<number, number>();
    const n = this.documents.length;
    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const [doc, tf] of list) {
        const norm = tf + this.k1 * (1 - this.b + (this.b * this.lengths[doc]!) / (this.averageLength || 1));
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (this.k1 + 1)) / norm);
      }
    }
    return [...scores]
      .filter(([doc]) => accept(this.documents[doc]!.item))
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, limit)
      .map(([doc, score]) => ({ item: this.documents[doc]!.item, score }));
  }
}
