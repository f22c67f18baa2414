"""The app's routes, one module-level :class:`fastapi.APIRouter` per resource; :func:`podium.service.app.create_app` includes them."""
