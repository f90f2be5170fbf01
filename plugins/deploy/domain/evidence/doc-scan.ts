/**
 * "Found in docs" evidence: which sign-in methods an image's own metadata mentions (its environment variable names,
 * labels, registry description and README). This is the weakest level of evidence, below tested and documented recipes.
 */

export type DocMethod = 'oidc' | 'saml' | 'header' | 'none' | 'basic' | 'ldap';
export type DocPlace = 'env' | 'label' | 'description' | 'readme' | 'source readme';

export interface DocFinding {
    method: DocMethod;
    what: DocPlace;
    /** The variable name, or the sentence (description, label) or line (README) that mentions the method; at most 200 characters. */
    text: string;
}

export interface ImageDocs {
    /** `NAME=value`, as in an image config. Only names are read: values may be secrets. */
    env?: string[];
    labels?: Record<string, string>;
    /** The registry description. */
    description?: string;
    /** The project README, in Markdown. */
    readme?: string;
    /** The README of the source repository the image's labels name (org.opencontainers.image.source). */
    sourceReadme?: string;
}

export const DOC_METHODS: readonly DocMethod[] = ['oidc', 'saml', 'header', 'none', 'basic', 'ldap'];
const PLACES: readonly DocPlace[] = ['env', 'label', 'description', 'readme', 'source readme'];
export const MAX_FINDINGS_PER_METHOD = 5;
export const MAX_FINDING_LENGTH = 200;
/** How much of each text is read (the README, the description, each label). */
export const MAX_SCANNED_BYTES = 200 * 1024;

/** Matched on whole names: `(^|_)` before, so `NOAUTH` or `LOAUTHOR` do not count. */
const ENV_NAME_PATTERNS: Record<DocMethod, RegExp> = {
    oidc: /(?:^|_)(?:OIDC|OPENID|OAUTH)/i,
    saml: /(?:^|_)SAML/i,
    header: /(?:^|_)(?:REMOTE_USER|AUTH_PROXY|PROXY_AUTH|FORWARD_AUTH|HEADER_AUTH)|TRUSTED_HEADER/i,
    none: /(?:^|_)(?:DISABLE_AUTH(?:ENTICATION)?|AUTH(?:ENTICATION)?_DISABLED|NO_AUTH)(?:_|$)/i,
    basic: /(?:^|_)(?:BASIC_AUTH|AUTH_BASIC|HTTP_BASIC)/i,
    ldap: /(?:^|_)LDAPS?(?:_|$)/i,
};

const AUTH = 'auth(?:entication)?';

/**
 * Phrases in prose and in configuration examples. Word boundaries are "no letter or digit" on either side, so that
 * `OIDC_ISSUER` and `--no-auth` count but "loauthor" and "authorization" do not.
 */
const TEXT_PATTERNS: Record<DocMethod, RegExp> = {
    oidc: words('open[-_ ]?id(?:[-_ ]?connect)?', 'oidc', 'oauth ?2?(?:\\.0)?'),
    saml: words('saml(?: ?v?2(?:\\.0)?)?'),
    header: words(
        'remote[-_ ]user',
        'x[-_]forwarded[-_]user',
        'trusted[-_ ]headers?',
        `${AUTH}[-_ ]?proxy`,
        `proxy[-_ ]${AUTH}`,
        `forward[-_ ]?${AUTH}`,
        `headers?[-_ ]?(?:based[-_ ])?${AUTH}`,
    ),
    none: words(
        `disabl(?:e|es|ed|ing)[-_ ]?(?:the[-_ ])?${AUTH}`,
        `${AUTH}[-_ ]?(?:is[-_ ])?disabled`,
        `(?:no[-_ ]?|without[-_ ])${AUTH}`,
        `${AUTH}(?:[-_ ]?(?:method|mode|type))?["']?\\s*[:=]\\s*["']?none`,
        '-{1,2}auth[= ]+none',
    ),
    basic: words(`(?:http[-_ ])?basic[-_ ]?${AUTH}`, 'http[-_ ]basic', 'auth[-_ ]basic', 'authorization:\\s*basic'),
    // Not "Active Directory": Azure's is reached over OIDC or SAML.
    ldap: words('ldaps?', 'openldap'),
};

function words(...alternatives: string[]): RegExp {
    return new RegExp(`(?<![a-z0-9])(?:${alternatives.join('|')})(?![a-z0-9])`, 'i');
}

/** One piece of text to match: an env name, a sentence of a label or the description, a README line. */
interface Passage {
    text: string;
    /** Whether a long passage is cut to the sentence around the match before a window of it is taken. */
    isLine: boolean;
}

export function scanImageDocs(input: ImageDocs): DocFinding[] {
    const passages: Record<DocPlace, Passage[]> = {
        env: envNames(input.env ?? []).map((text) => ({ text, isLine: false })),
        label: labelValues(input.labels ?? {}).flatMap(sentences),
        description: sentences(input.description ?? ''),
        readme: readmeLines(input.readme ?? ''),
        'source readme': readmeLines(input.sourceReadme ?? ''),
    };
    return DOC_METHODS.flatMap((method) => findingsFor(method, passages));
}

function findingsFor(method: DocMethod, passages: Record<DocPlace, Passage[]>): DocFinding[] {
    const findings: DocFinding[] = [];
    const seen = new Set<string>();
    for (const what of PLACES) {
        for (const passage of passages[what]) {
            if (findings.length === MAX_FINDINGS_PER_METHOD) {
                return findings;
            }

            const text = what === 'env' ? envFinding(method, passage.text) : textFinding(method, passage);
            const key = `${what}\n${text}`;
            if (text !== undefined && !seen.has(key)) {
                seen.add(key);
                findings.push({ method, what, text });
            }
        }
    }

    return findings;
}

function envFinding(method: DocMethod, name: string): string | undefined {
    return ENV_NAME_PATTERNS[method].test(name) ? name.slice(0, MAX_FINDING_LENGTH) : undefined;
}

function textFinding(method: DocMethod, passage: Passage): string | undefined {
    const match = TEXT_PATTERNS[method].exec(passage.text);
    return match === null ? undefined : excerpt(passage, match.index, match[0].length);
}

function envNames(env: string[]): string[] {
    const names = env.filter((entry) => typeof entry === 'string').map((entry) => entry.split('=', 1)[0]?.trim() ?? '');
    return [...new Set(names.filter((name) => name !== ''))];
}

/** Label values in the order of their keys, so that the findings do not depend on the order the labels came in. */
function labelValues(labels: Record<string, string>): string[] {
    return Object.keys(labels)
        .sort()
        .map((key) => labels[key])
        .filter((value): value is string => typeof value === 'string');
}

/** The sentences of a text, each on its own (a finding shows the sentence, not the paragraph). */
function sentences(text: string): Passage[] {
    return lines(firstBytes(text, MAX_SCANNED_BYTES))
        .flatMap((line) => line.split(/(?<=[.!?])\s+/))
        .filter((sentence) => sentence !== '')
        .map((sentence) => ({ text: sentence, isLine: false }));
}

/** README lines, fenced code blocks included: a configuration example is evidence too. */
function readmeLines(readme: string): Passage[] {
    return lines(firstBytes(readme, MAX_SCANNED_BYTES))
        .map((line) => line.replace(/^(?:(?:#{1,6}|>|[*+-]|\d+[.)])\s+)+/, ''))
        .filter((line) => line !== '')
        .map((line) => ({ text: line, isLine: true }));
}

function lines(text: string): string[] {
    return text.split(/\r\n|\r|\n/).map((line) => line.replace(/\s+/g, ' ').trim());
}

/** The first `limit` bytes of a text in UTF-8, without a character cut in two at the end. */
function firstBytes(text: string, limit: number): string {
    const head = text.slice(0, limit);
    const bytes = Buffer.from(head, 'utf8');
    return bytes.length <= limit
        ? head
        : bytes
              .subarray(0, limit)
              .toString('utf8')
              .replace(/\uFFFD$/, '');
}

/** The passage, or when it is too long the sentence of the match, or a window around the match. */
function excerpt(passage: Passage, index: number, length: number): string {
    if (passage.text.length <= MAX_FINDING_LENGTH) {
        return passage.text;
    }

    const sentence = passage.isLine ? sentenceAround(passage.text, index, length) : { text: passage.text, index };
    return sentence.text.length <= MAX_FINDING_LENGTH ? sentence.text : windowAround(sentence.text, sentence.index, length);
}

/** The sentence holding text[index, index + length), and where the match is in it. */
function sentenceAround(text: string, index: number, length: number): { text: string; index: number } {
    const endsSentence = (at: number) => /[.!?]/.test(text[at] ?? '') && (at + 1 === text.length || /\s/.test(text[at + 1] ?? ''));
    let start = index;
    while (start > 0 && !endsSentence(start - 2)) {
        start -= 1;
    }

    let end = index + length;
    while (end < text.length && !endsSentence(end - 1)) {
        end += 1;
    }

    const sentence = text.slice(start, end);
    const trimmedStart = sentence.length - sentence.trimStart().length;
    return { text: sentence.trim(), index: index - start - trimmedStart };
}

function windowAround(text: string, index: number, length: number): string {
    const room = MAX_FINDING_LENGTH - 2; // two ellipses
    const start = Math.max(0, Math.min(index - Math.floor((room - length) / 2), text.length - room));
    const end = Math.min(text.length, start + room);
    return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}
