import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { imageName, type MatchKind, matchRecipe } from '../../../../../plugins/deploy/domain/recipes/image-match.ts';
import type { Recipe } from '../../../../../plugins/deploy/domain/recipes/recipe-types.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function recipe(id: string, image: string, aliases: string[] = []): Recipe {
    return {
        id,
        image,
        aliases,
        title: id,
        method: 'oidc',
        level: 'documented',
        sources: ['https://example.org/'],
        origin: { kind: 'file', path: `${id}.yaml` },
    };
}

const RECIPES = [
    recipe('gitea', 'gitea/gitea', ['docker.gitea.com/gitea', 'gitea/gitea:*-rootless']),
    recipe('grafana', 'grafana/grafana', ['grafana/grafana-oss']),
    recipe('nginx-official', 'nginx'),
    recipe('bookstack', 'lscr.io/linuxserver/bookstack', ['linuxserver/bookstack', 'solidnerd/bookstack']),
    recipe('wiki-a', 'example/wiki'),
    recipe('wiki-b', 'other/wiki'),
    recipe('vaultwarden', 'vaultwarden/server', ['ghcr.io/dani-garcia/vaultwarden']),
];

describe('deploy manager: which recipe applies to an image', () => {
    it('reads references as registries name them', () => {
        const table: Array<[string, string, string, string | null]> = [
            ['nginx', 'docker.io/library/nginx', 'nginx', null],
            ['nginx:1.25', 'docker.io/library/nginx', 'nginx', '1.25'],
            ['library/nginx', 'docker.io/library/nginx', 'nginx', null],
            ['docker.io/library/nginx:latest', 'docker.io/library/nginx', 'nginx', 'latest'],
            ['index.docker.io/grafana/grafana', 'docker.io/grafana/grafana', 'grafana', null],
            ['GHCR.io/Owner/App:V1', 'ghcr.io/owner/app', 'app', 'v1'],
            ['127.0.0.1:5000/team/app@sha256:abcd', '127.0.0.1:5000/team/app', 'app', null],
            ['localhost/app:2', 'localhost/app', 'app', '2'],
            ['lscr.io/linuxserver/bookstack', 'lscr.io/linuxserver/bookstack', 'bookstack', null],
        ];
        for (const [reference, repository, name, tag] of table) {
            expect(imageName(reference), reference).to.equal({ repository, name, tag });
        }
    });

    it('matches the exact image, then aliases, then a name only one recipe has', () => {
        const table: Array<[string, string | null, MatchKind | null]> = [
            ['gitea/gitea', 'gitea', 'exact'],
            ['gitea/gitea:1.22', 'gitea', 'exact'],
            ['docker.io/gitea/gitea:latest', 'gitea', 'exact'],
            ['docker.gitea.com/gitea:1.22', 'gitea', 'alias'],
            ['nginx:alpine', 'nginx-official', 'exact'],
            ['docker.io/library/nginx', 'nginx-official', 'exact'],
            ['linuxserver/bookstack:latest', 'bookstack', 'alias'],
            ['ghcr.io/linuxserver/bookstack', 'bookstack', 'name'],
            ['quay.io/someone/grafana', 'grafana', 'name'],
            ['grafana/grafana-oss:11', 'grafana', 'alias'],
            ['ghcr.io/dani-garcia/vaultwarden:1.30', 'vaultwarden', 'alias'],
            // The same name (`server`) in another namespace is another project: the name alone is not enough.
            ['bitwarden/server', null, null],
            ['ghcr.io/vaultwarden/server', 'vaultwarden', 'name'],
            ['someone/vaultwarden', 'vaultwarden', 'name'],
            // Two recipes have a `wiki`: no match.
            ['ghcr.io/third/wiki', null, null],
            ['example/wiki', 'wiki-a', 'exact'],
            ['something/else', null, null],
        ];
        for (const [reference, id, how] of table) {
            const match = matchRecipe(reference, RECIPES);
            expect(match?.recipe.id ?? null, reference).to.equal(id);
            expect(match?.how ?? null, reference).to.equal(how);
        }
    });

    it('reads a tag pattern of an alias: only tags of that form match it', () => {
        const rootless = [recipe('rootless', 'example/forge:*-rootless'), recipe('plain', 'example/forge-plain')];
        expect(matchRecipe('example/forge:1.22-rootless', rootless)?.recipe.id).to.equal('rootless');
        expect(matchRecipe('example/forge:1.22', rootless)?.how).to.equal('name');
    });

    it('prefers the first of several exact matches (saved recipes come first)', () => {
        const saved = { ...recipe('saved-3', 'grafana/grafana'), level: 'tested' as const };
        expect(matchRecipe('grafana/grafana', [saved, ...RECIPES])?.recipe.id).to.equal('saved-3');
    });
});
