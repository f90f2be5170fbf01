/**
 * Which deployed apps run an image whose moving tag now names another image at its registry: each running container's
 * image (as Compose started it, `repository:tag`) is asked of its registry through the hub's look-ups (the same
 * allow-list), and compared with the digests the local image was pulled by.
 */
import type { Server } from '@hapi/hapi';

import { apps as appService } from '../apps/app-service.ts';
import { hub } from '../hub/hub-service.ts';
import { LABEL } from '../host/compose-labels.ts';
import { dockerClient } from '../host/docker-client.ts';

export interface AvailableUpdate {
    app: string;
    service: string;
    /** As the compose file names it. */
    image: string;
    /** The digest the registry has for the tag now. */
    latest: string;
}

/**
 * The updates there are for this server's apps (or the one app named); an image the registry cannot be asked of is
 * left out.
 */
export async function availableUpdates(server: Server, onlyApp?: string): Promise<AvailableUpdate[]> {
    const docker = dockerClient();
    const project = onlyApp === undefined ? LABEL.project : `${LABEL.project}=${onlyApp}`;
    const listed = await docker.listContainers({ filters: { label: [`${LABEL.managed}=true`, project] } });
    const apps = await appService(server).existing([...new Set(listed.map((summary) => summary.Labels[LABEL.project] ?? ''))]);
    const updates: AvailableUpdate[] = [];
    const seen = new Set<string>();
    for (const summary of listed) {
        const app = summary.Labels[LABEL.project] ?? '';
        if (!apps.has(app)) continue;
        // As the container was made with it: a list shows the image's id instead once its tag has moved on.
        const image = ((await docker.getContainer(summary.Id).inspect()) as { Config: { Image: string } }).Config.Image;
        const key = `${app}\n${image}`;
        if (seen.has(key) || image.startsWith('sha256:')) continue;
        seen.add(key);
        const pulledBy = ((await docker.getImage(summary.ImageID).inspect()) as { RepoDigests?: string[] }).RepoDigests ?? [];
        let latest: string;
        try {
            latest = await hub(server).currentDigest(image);
        } catch {
            // Not on a registry this server may ask (a locally built image, a registry that does not answer).
            continue;
        }

        if (!pulledBy.some((reference) => reference.endsWith(`@${latest}`))) {
            updates.push({ app, service: summary.Labels[LABEL.service] ?? '', image, latest });
        }
    }

    return updates;
}
