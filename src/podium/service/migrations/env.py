"""Alembic's environment: podium passes the connection in ``config.attributes`` (see ``database.migrate``)."""

from alembic import context

from podium.service.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
