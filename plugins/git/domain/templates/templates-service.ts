import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Path from 'node:path';

import { NotFoundError } from '../../../../lib/errors.ts';
import { ROOT_DIR } from '../../../../lib/paths.ts';
import { defineService } from '../../../../lib/services.ts';
import { yamlLibrary } from '../../../../lib/yaml-cache.ts';

/** Gitea's structs.LabelTemplate, its fields in the order Gitea's JSON gives them. */
export interface LabelTemplate {
    name: string;
    exclusive: boolean;
    color: string;
    description: string;
}

export interface LicenseEntry {
    key: string;
    name: string;
    url: string;
}

export interface LicenseInfo extends LicenseEntry {
    implementation: string;
    body: string;
}

interface SpdxLicense {
    name: string;
    licenseText: string;
}

const LICENSE_IMPLEMENTATION =
    'Create a text file (typically named LICENSE or LICENSE.txt) in the root of your source code and copy the text of the license into the file';

/** Go sorts strings by bytes: upper case before lower case. */
function byteOrder(left: string, right: string): number {
    return Buffer.compare(Buffer.from(left), Buffer.from(right));
}

export interface TemplateFolders {
    /** Templates shipped with Gatehouse. */
    assetsDir: string;
    /** An administrator's additions or replacements, as Gitea's custom/options. */
    customDir: string;
}

/**
 * The read-only catalogs of the miscellaneous group: ignore-file, label and license templates (shipped files
 * overlaid by the administrator's custom folder), each read on first use and kept: the SPDX list with its texts is
 * about 20 MB resident and a tenth of a second, which a server need not pay at start for a request that may never come.
 */
export class TemplatesService {
    readonly #folders: TemplateFolders;
    readonly #rootUrl: string;
    #gitignores: Map<string, string> | undefined;
    #labelSets: Map<string, LabelTemplate[]> | undefined;
    #licenses: Map<string, string> | undefined;
    #licenseList: LicenseEntry[] | undefined;
    /** The list never changes while the server runs, so it is serialised once (75 KB for the SPDX list). */
    #licenseListJson: Buffer | undefined;

    constructor(folders: TemplateFolders, rootUrl: string) {
        this.#folders = folders;
        this.#rootUrl = rootUrl;
    }

    get #gitignoreFiles(): Map<string, string> {
        this.#gitignores ??= readTextFiles([
            Path.join(this.#folders.assetsDir, 'gitignore', 'templates'),
            Path.join(this.#folders.customDir, 'gitignore'),
        ]);
        return this.#gitignores;
    }

    get #labelSetFiles(): Map<string, LabelTemplate[]> {
        this.#labelSets ??= readLabelSets([Path.join(this.#folders.assetsDir, 'label'), Path.join(this.#folders.customDir, 'label')]);
        return this.#labelSets;
    }

    get #licenseTexts(): Map<string, string> {
        this.#licenses ??= readLicenses(Path.join(this.#folders.customDir, 'license'));
        return this.#licenses;
    }

    gitignoreNames(): string[] {
        return [...this.#gitignoreFiles.keys()];
    }

    gitignore(name: string): { name: string; source: string } {
        const source = this.#gitignoreFiles.get(cleanName(name));
        if (source === undefined) {
            throw new NotFoundError();
        }

        return { name: cleanName(name), source };
    }

    labelSetNames(): string[] {
        return [...this.#labelSetFiles.keys()];
    }

    labelSet(name: string): LabelTemplate[] {
        const labels = this.#labelSetFiles.get(name);
        if (!labels) {
            throw new NotFoundError();
        }

        return labels;
    }

    licenseList(): LicenseEntry[] {
        this.#licenseList ??= [...this.#licenseTexts.keys()].map((name) => this.#licenseEntry(name));
        return this.#licenseList;
    }

    licenseListJson(): Buffer {
        // Kept as bytes: a string body would be encoded to UTF-8 again on every answer (75 KB for the full list).
        this.#licenseListJson ??= Buffer.from(JSON.stringify(this.licenseList()));
        return this.#licenseListJson;
    }

    license(name: string): LicenseInfo {
        const body = this.#licenseTexts.get(cleanName(name));
        if (body === undefined) {
            throw new NotFoundError();
        }

        return { ...this.#licenseEntry(cleanName(name)), implementation: LICENSE_IMPLEMENTATION, body };
    }

    #licenseEntry(name: string): LicenseEntry {
        return { key: name, name, url: `${this.#rootUrl}api/v1/licenses/${encodeURIComponent(name)}` };
    }
}

/** Like Go's path.Clean on a name: no directories, so `../x` and `x/` name `x`. */
function cleanName(name: string): string {
    return Path.posix.basename(Path.posix.normalize(`/${name}`));
}

function listFiles(folder: string): string[] {
    if (!Fs.existsSync(folder)) {
        return [];
    }

    return Fs.readdirSync(folder, { withFileTypes: true })
        .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
        .map((entry) => entry.name);
}

function readTextFiles(folders: string[]): Map<string, string> {
    const files = new Map<string, string>();
    for (const folder of folders) {
        for (const name of listFiles(folder)) {
            files.set(name, Fs.readFileSync(Path.join(folder, name), 'utf8'));
        }
    }

    return new Map([...files].sort(([left], [right]) => byteOrder(left, right)));
}

function readLicenses(customFolder: string): Map<string, string> {
    const require = createRequire(import.meta.url);
    const spdx = require('spdx-license-list/full') as Record<string, SpdxLicense>;
    const licenses = new Map(Object.entries(spdx).map(([id, license]) => [id, license.licenseText]));
    for (const [name, text] of readTextFiles([customFolder])) {
        licenses.set(name, text);
    }

    return new Map([...licenses].sort(([left], [right]) => byteOrder(left, right)));
}

/** A YAML file (`labels: [...]`) wins over a legacy file (`#rrggbb name ; description` lines) of the same name. */
function readLabelSets(folders: string[]): Map<string, LabelTemplate[]> {
    const sets = new Map<string, { labels: LabelTemplate[]; yaml: boolean }>();
    for (const folder of folders) {
        for (const file of listFiles(folder)) {
            const extension = Path.extname(file).toLowerCase();
            const yaml = extension === '.yaml' || extension === '.yml';
            const name = yaml ? file.slice(0, -extension.length) : file;
            if (sets.get(name)?.yaml && !yaml) {
                continue;
            }

            const text = Fs.readFileSync(Path.join(folder, file), 'utf8');
            sets.set(name, { labels: yaml ? parseYamlLabels(text, file) : parseLegacyLabels(text), yaml });
        }
    }

    return new Map([...sets].sort(([left], [right]) => byteOrder(left, right)).map(([name, { labels }]) => [name, labels]));
}

function parseYamlLabels(text: string, file: string): LabelTemplate[] {
    const document = yamlLibrary().parse(text, { schema: 'failsafe' }) as { labels?: Array<Record<string, unknown>> } | null;
    if (!Array.isArray(document?.labels)) {
        throw new Error(`Label template ${file} has no labels list`);
    }

    return document.labels.map((label) => ({
        name: String(label.name ?? ''),
        exclusive: String(label.exclusive).toLowerCase() === 'true',
        color: normaliseColor(String(label.color ?? '')),
        description: String(label.description ?? ''),
    }));
}

function parseLegacyLabels(text: string): LabelTemplate[] {
    return text
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.startsWith('#') && line.includes(' '))
        .map((line) => {
            const [head = '', description = ''] = line.split(';', 2);
            const [color = '', ...words] = head.trim().split(/\s+/);
            return { name: words.join(' '), exclusive: false, color: normaliseColor(color), description: description.trim() };
        });
}

/** Gitea's API gives colours lower-case, six digits, without the leading `#`. */
function normaliseColor(color: string): string {
    let hex = color.trim().replace(/^#/, '').toLowerCase();
    if (/^[0-9a-f]{3}$/.test(hex)) {
        hex = [...hex].map((digit) => digit + digit).join('');
    }

    return hex;
}

const ASSETS_DIR = Path.join(ROOT_DIR, 'assets');

/** The ignore-file, label and licence templates: the bundled ones, and an administrator's own under the data folder. */
export const templates = defineService(
    'templates',
    (server) =>
        new TemplatesService(
            { assetsDir: ASSETS_DIR, customDir: Path.join(server.app.config.dataDir, 'custom', 'options') },
            server.app.config.publicUrl,
        ),
);
