/** Masks an app's known secret values wherever they turn up in text the app itself wrote: its containers' logs. */
import { maskSecret } from './app-service.ts';

/** A line of a multi-line value is looked for on its own only from this length: shorter ones are ordinary text. */
const MIN_LINE_LENGTH = 8;

/** How a value commonly appears in an app's output: as it is, line by line, escaped in JSON, encoded in a URL. */
function spellingsOf(value: string): string[] {
    const lines = value.includes('\n') ? value.split(/\r?\n/).filter((line) => line.trim().length >= MIN_LINE_LENGTH) : [];
    return [value, ...lines, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)];
}

/** A function that replaces every spelling of the values in a text by the mask; the longest first, so none is left half. */
export function secretMask(values: string[]): (text: string) => string {
    const spellings = [...new Set(values.filter((value) => value !== '').flatMap(spellingsOf))].sort((a, b) => b.length - a.length);
    const mask = maskSecret('x');
    return (text) => spellings.reduce((masked, spelling) => (masked.includes(spelling) ? masked.split(spelling).join(mask) : masked), text);
}
