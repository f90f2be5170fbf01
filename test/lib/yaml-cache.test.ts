import { createHash } from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import YAML from 'yaml';

import { ROOT_DIR } from '../../lib/paths.ts';
import {
    CACHED_YAML_FOLDERS,
    cachedValue,
    EMBEDDED_YAML_FIELDS,
    isCachedYaml,
    parseYaml,
    writeYamlCache,
    YAML_CACHE_DIR,
} from '../../lib/yaml-cache.ts';
import { temporaryDirectory } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const entryOf = (folder: string, text: string) => Path.join(folder, `${createHash('sha256').update(text).digest('hex')}.json`);

describe('the YAML the build parses (lib/yaml-cache.ts)', () => {
    it('writes the value of every spec and recipe file as YAML.parse gives it', () => {
        const cache = temporaryDirectory('gatehouse-yaml-cache-');
        const written = writeYamlCache(ROOT_DIR, CACHED_YAML_FOLDERS, cache);
        const files = CACHED_YAML_FOLDERS.flatMap((folder) =>
            Fs.readdirSync(Path.join(ROOT_DIR, folder), { recursive: true, encoding: 'utf8' })
                .filter((name) => name.endsWith('.yaml'))
                .map((name) => Path.join(ROOT_DIR, folder, name)),
        );
        expect(files.length).to.be.above(30);
        expect(written).to.equal(files.length);
        for (const file of files) {
            const text = Fs.readFileSync(file, 'utf8');
            expect(JSON.parse(Fs.readFileSync(entryOf(cache, text), 'utf8')), file).to.equal(YAML.parse(text));
        }
    });

    it("writes the value of each shipped recipe's compose template too", () => {
        const cache = temporaryDirectory('gatehouse-yaml-cache-');
        writeYamlCache(ROOT_DIR, ['recipes'], cache, EMBEDDED_YAML_FIELDS);
        const templates = Fs.readdirSync(Path.join(ROOT_DIR, 'recipes'))
            .filter((name) => name.endsWith('.yaml'))
            .map((name) => (YAML.parse(Fs.readFileSync(Path.join(ROOT_DIR, 'recipes', name), 'utf8')) as { compose?: string }).compose)
            .filter((compose): compose is string => typeof compose === 'string');
        expect(templates.length).to.be.above(5);
        for (const template of templates) {
            expect(cachedValue(cache, template)).to.equal({ value: YAML.parse(template, { logLevel: 'error' }) });
        }
    });

    it('leaves out a file that does not parse and a value JSON cannot hold', () => {
        const root = temporaryDirectory('gatehouse-yaml-root-');
        const cache = Path.join(root, 'cache');
        Fs.mkdirSync(Path.join(root, 'specs', 'nested'), { recursive: true });
        const plain = 'name: plain\nlist: [1, two, null]\n';
        const infinite = 'limit: .inf\n';
        const broken = 'a: [1, 2\n';
        Fs.writeFileSync(Path.join(root, 'specs', 'nested', 'plain.yaml'), plain);
        Fs.writeFileSync(Path.join(root, 'specs', 'infinite.yaml'), infinite);
        Fs.writeFileSync(Path.join(root, 'specs', 'broken.yaml'), broken);

        expect(writeYamlCache(root, ['specs', 'absent'], cache)).to.equal(1);
        expect(JSON.parse(Fs.readFileSync(entryOf(cache, plain), 'utf8'))).to.equal({ name: 'plain', list: [1, 'two', null] });
        expect(Fs.existsSync(entryOf(cache, infinite))).to.be.false();
        expect(Fs.existsSync(entryOf(cache, broken))).to.be.false();
    });

    it('parses a text the build did not see, and reports its mistakes as YAML does', () => {
        const text = `seen: ${Date.now()}\n`;
        expect(Fs.existsSync(entryOf(YAML_CACHE_DIR, text))).to.be.false();
        expect(isCachedYaml(text)).to.be.false();
        expect(parseYaml(text)).to.equal(YAML.parse(text));
        expect(() => parseYaml('a: 1\na: 2\n')).to.throw(/unique/i);
    });

    it('reads the value a cache folder holds for the text, not the YAML', () => {
        const cache = temporaryDirectory('gatehouse-yaml-cache-');
        const text = 'from: yaml\n';
        expect(cachedValue(cache, text)).to.be.undefined();
        Fs.writeFileSync(entryOf(cache, text), JSON.stringify({ from: 'the build' }));
        expect(cachedValue(cache, text)).to.equal({ value: { from: 'the build' } });
    });
});
