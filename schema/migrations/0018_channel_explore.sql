CREATE INDEX `channels_public_activity` ON `channels` (`read_public`,`recent_message_id`);--> statement-breakpoint
CREATE INDEX `channels_public_id` ON `channels` (`read_public`,`id`);