/**
 * Which updates an app's image has (`GET /api/apps/{name}/updates`): for a version tag, the newer tags of its line
 * at the image's registry (the hub's tag lists, kept a few minutes); for a moving tag (`latest`, `stable`), whether
 * the tag names another image now than the one running. The update itself is a run of the lifecycle's.
 */
import { ValidationError } from '../../../../lib/errors.ts';
import { Service } from '../../../../lib/service.ts';
import { defineService } from '../../../../lib/services.ts';
import { apps } from '../apps/app-service.ts';
import { hub } from '../hub/hub-service.ts';
import { availableUpdates } from '../notifications/update-check.ts';
import { newerTags, parseVersionTag, type VersionChange } from './version-tags.ts';

export interface ImageUpdate {
    tag: string;
    /** How far the tag moves (a version tag), or `digest`: the same tag names a newer image. */
    change: VersionChange | 'digest';
}

export interface AppUpdates {
    image: string;
    tag: string;
    /** Whether the tag is a version (updates are newer tags) or a moving tag (an update is a new image under it). */
    versioned: boolean;
    updates: ImageUpdate[];
    /** False when the registry's list of tags was cut short: a newer tag may be missing. */
    complete: boolean;
}

export class UpdateService extends Service {
    async available(name: string, options: { otherMajors?: boolean } = {}): Promise<AppUpdates> {
        const app = await apps(this.server).require(name);
        if (app.state === 'draft') {
            throw new ValidationError(`${app.name} has not been deployed yet: there is nothing to update`);
        }

        if (!app.image) {
            throw new ValidationError(`${app.name} runs no image of its own (it was made from a template): update its compose file`);
        }

        const described = { image: app.image, tag: app.tag };
        if (parseVersionTag(app.tag)) {
            const listed = await hub(this.server).tags(app.image);
            const tags = listed.tags.map((tag) => tag.name);
            return { ...described, versioned: true, updates: newerTags(app.tag, tags, options), complete: listed.complete };
        }

        const reference = `${app.image}:${app.tag}`;
        const moved = (await availableUpdates(this.server, app.name)).some((update) => update.image === reference);
        return { ...described, versioned: false, updates: moved ? [{ tag: app.tag, change: 'digest' }] : [], complete: true };
    }
}

export const updates = defineService<UpdateService>('updates', (owner) => new UpdateService(owner));
