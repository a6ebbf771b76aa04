"""Migration 113: what an uploaded image is (its size as shown, after EXIF orientation, and its
frame count) and which thumbnails exist for it, as Zulip's ImageAttachment keeps. Images uploaded
before have NULL here until `chat-appliance thumbnail-uploads` (or nothing: they stay links).
"""

DESCRIPTION = "image sizes and thumbnails of uploads"

COLUMNS = (
    ("image_width", "INTEGER NULL"),
    ("image_height", "INTEGER NULL"),
    ("image_frames", "INTEGER NULL"),
    # Space-separated thumbnail formats made ("840x560.webp 840x560-anim.webp"); "" none yet.
    ("thumbnail_formats", "VARCHAR(200) NOT NULL DEFAULT ''"),
)


def apply(database, backend):
    existing = {column.name for column in database.get_columns("attachment")}
    for name, sql_type in COLUMNS:
        if name not in existing:
            database.execute_sql(f"ALTER TABLE attachment ADD COLUMN {name} {sql_type}")
